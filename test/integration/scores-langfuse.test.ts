import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { getJson } from './scores-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

/** What a Langfuse SDK sends: Basic base64(publicKey:secretKey), the secret a Loupe key. */
const basic = () => ({ authorization: `Basic ${Buffer.from(`pk-lf-anything:${tenant.key}`).toString('base64')}` });

describe('Langfuse scores', () => {
  it('stores score-create events of /api/public/ingestion, per event, and answers other types as not taken', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/public/ingestion',
      headers: basic(),
      payload: {
        batch: [
          {
            id: 'e1',
            type: 'score-create',
            timestamp: new Date().toISOString(),
            body: { id: 'lf-1', traceId: 'lf-t', name: 'correct', value: 1, dataType: 'BOOLEAN' },
          },
          {
            id: 'e2',
            type: 'score-create',
            timestamp: new Date().toISOString(),
            body: { traceId: 'lf-t', observationId: 'obs-1', name: 'quality', value: 0.8, comment: 'ok' },
          },
          { id: 'e3', type: 'score-create', timestamp: new Date().toISOString(), body: { name: 'no-target', value: 1 } },
          { id: 'e4', type: 'trace-create', timestamp: new Date().toISOString(), body: { id: 'lf-t' } },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(207);
    const body = res.json();
    expect(body.successes).toEqual([
      { id: 'e1', status: 201 },
      { id: 'e2', status: 201 },
    ]);
    expect(body.errors.map((e: { id: string; status: number }) => [e.id, e.status])).toEqual([
      ['e3', 400],
      ['e4', 400],
    ]);
    expect(body.errors[0].error).toContain('body.traceId');
    expect(body.errors[1].message).toContain('trace-create');
    const stored = (await getJson(ctx, tenant, '/api/scores?traceId=lf-t')).json().data;
    const byName = Object.fromEntries(stored.map((s: { name: string }) => [s.name, s]));
    expect(byName.correct).toMatchObject({ id: 'lf-1', dataType: 'boolean', value: 1, source: 'sdk' });
    expect(byName.quality).toMatchObject({ spanId: 'obs-1', value: 0.8, comment: 'ok', source: 'sdk' });
  });

  it('creates a score through POST /api/public/scores and names a bad field', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/public/scores',
      headers: basic(),
      payload: { traceId: 'lf-t2', name: 'tone', value: 'polite', dataType: 'CATEGORICAL' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id as string;
    expect((await getJson(ctx, tenant, `/api/scores/${id}`)).json().data).toMatchObject({ stringValue: 'polite', source: 'api' });
    const bad = await ctx.app.inject({
      method: 'POST',
      url: '/api/public/scores',
      headers: basic(),
      payload: { traceId: 'x', name: 'n', value: [] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('body.value');
  });

  it("never writes into another workspace: the key's workspace only", async () => {
    const other = await ctx.tenant();
    expect((await getJson(ctx, other, '/api/scores?traceId=lf-t')).json().data).toEqual([]);
  });
});
