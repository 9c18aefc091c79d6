import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, trace, uniqueId } from './traces-fixtures.js';

let ctx: TestContext;
let owner: Tenant;
let stranger: Tenant;
const shared = uniqueId('shared'); // one trace id used by both workspaces
const ownerOnly = uniqueId('owner-only');
const session = uniqueId('owner-session');
const otlpTraceId = 'ab'.repeat(16);

function ownerTrace(traceId: string) {
  return trace({
    traceId,
    sessionId: session,
    name: 'owner-secret-trace',
    spans: [span({ name: 'owner-secret-span', kind: 'llm.chat', model: 'owner-model', inputTokens: 100, outputTokens: 50, costUsd: 2 })],
  });
}

const get = (who: Tenant, url: string) => ctx.app.inject({ method: 'GET', url, headers: who.headers });

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await ctx.tenant();
  stranger = await ctx.tenant();
  const ingested = await post(ctx, owner, [ownerTrace(shared), ownerTrace(ownerOnly)]);
  expect(ingested.json().data, ingested.body).toMatchObject({ accepted: 2, rejected: 0 });
  const theirs = trace({ traceId: shared, name: 'stranger-trace', spans: [span({ name: 'stranger-span' })] });
  expect((await post(ctx, stranger, [theirs])).json().data).toMatchObject({ accepted: 1 });
  const otlp = {
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              {
                traceId: otlpTraceId,
                spanId: '01'.repeat(8),
                name: 'owner-otlp-span',
                kind: 1,
                startTimeUnixNano: '1735689600000000000',
                endTimeUnixNano: '1735689601000000000',
                status: { code: 1 },
              },
            ],
          },
        ],
      },
    ],
  };
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/traces/otlp',
    headers: { ...owner.headers, 'content-type': 'application/json' },
    payload: otlp,
  });
  expect(res.statusCode, res.body).toBe(200);
});
afterAll(async () => {
  await ctx?.close();
});

describe('traces of another workspace', () => {
  it('cannot be read: 404 for a trace only the owner has, the own copy for a shared trace id', async () => {
    for (const id of [ownerOnly, otlpTraceId]) {
      const res = await get(stranger, `/api/traces/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain('owner-secret');
    }
    const mine = (await get(stranger, `/api/traces/${shared}`)).json().data;
    expect(JSON.stringify(mine)).not.toContain('owner-secret');
    expect(mine.spans.map((s: { name: string }) => s.name)).toEqual(['stranger-span']);
    const theirs = (await get(owner, `/api/traces/${shared}`)).json().data;
    expect(theirs.spans.map((s: { name: string }) => s.name)).toEqual(['owner-secret-span']);
  });

  it('are not listed, whatever the filters', async () => {
    for (const query of ['', `?sessionId=${session}`, '?include=spans', '?source=sdk&limit=100', '?source=otel']) {
      const res = await get(stranger, `/api/traces${query}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).not.toContain('owner-secret');
      expect(res.body).not.toContain(ownerOnly);
      expect(res.body).not.toContain(otlpTraceId);
    }
    expect((await get(stranger, `/api/traces?sessionId=${session}`)).json().data).toEqual([]);
  });

  it('are not aggregated into stats or analytics', async () => {
    for (const groupBy of ['model', 'provider', 'kind', 'source']) {
      const res = await get(stranger, `/api/traces/stats?groupBy=${groupBy}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).not.toContain('owner-model');
      const spanCount = res.json().data.groups.reduce((n: number, g: { spanCount: number }) => n + g.spanCount, 0);
      expect(spanCount, groupBy).toBe(1); // the stranger's one span, nothing of the owner's
    }
    const sessionStats = (await get(stranger, `/api/traces/stats?groupBy=model&sessionId=${session}`)).json().data;
    expect(sessionStats.groups).toEqual([]);
    const range = 'startAfter=2024-12-31T00:00:00Z&startBefore=2025-01-02T00:00:00Z';
    const answer = await get(stranger, `/api/traces/analytics?${range}`);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.body).not.toContain('owner-model');
    const theirs = answer.json().data;
    expect(theirs.totals).toMatchObject({ traceCount: 1, inputTokens: 0, costUsd: 0 });
    const mine = (await get(owner, `/api/traces/analytics?${range}`)).json().data;
    expect(mine.totals).toMatchObject({ traceCount: 3, inputTokens: 200, costUsd: 4 });
  });

  it('cannot be deleted, and deleting the own copy of a shared id leaves the other alone', async () => {
    const res = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${ownerOnly}`, headers: stranger.headers });
    expect(res.statusCode).toBe(404);
    expect((await get(owner, `/api/traces/${ownerOnly}`)).statusCode).toBe(200);
    const own = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${shared}`, headers: stranger.headers });
    expect(own.statusCode).toBe(200);
    expect((await get(stranger, `/api/traces/${shared}`)).statusCode).toBe(404);
    expect((await get(owner, `/api/traces/${shared}`)).json().data.spans).toHaveLength(1);
  });

  it('cannot be overwritten by ingesting the same trace and span ids, natively or through OTLP', async () => {
    const [ownerSpan] = (await get(owner, `/api/traces/${ownerOnly}`)).json().data.spans;
    const hijack = trace({ traceId: ownerOnly, name: 'hijacked', spans: [span({ spanId: ownerSpan.spanId, name: 'hijacked' })] });
    expect((await post(ctx, stranger, [hijack])).statusCode).toBe(200);
    expect((await post(ctx, stranger, [hijack], '/api/traces/batch')).statusCode).toBe(200);
    const otlp = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: otlpTraceId,
                  spanId: '01'.repeat(8),
                  name: 'hijacked',
                  kind: 1,
                  startTimeUnixNano: '1735689600000000000',
                  endTimeUnixNano: '1735689601000000000',
                  status: { code: 1 },
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp',
      headers: { ...stranger.headers, 'content-type': 'application/json' },
      payload: otlp,
    });
    expect(res.statusCode).toBe(200);
    for (const id of [ownerOnly, otlpTraceId]) {
      const body = (await get(owner, `/api/traces/${id}`)).body;
      expect(body).not.toContain('hijacked');
    }
  });
});
