import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toSpanRows } from '../../src/traces/ingest/ingest.js';
import type { Trace } from '../../src/traces/model/schemas.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

/**
 * Input an attacker or an unlucky client sends: it is refused with a path (4xx) or stored
 * safely, never a 500, and never fails another request or another workspace.
 */

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

const at = (ms: number) => new Date(Date.parse('2026-05-01T10:00:00Z') + ms).toISOString();
const span = (extra: Record<string, unknown> = {}) => ({
  spanId: 'root',
  name: 'root',
  kind: 'llm.chat',
  startTime: at(0),
  endTime: at(100),
  durationMs: 100,
  status: 'ok',
  ...extra,
});
const trace = (traceId: string, extra: Record<string, unknown> = {}, spanExtra: Record<string, unknown> = {}) => ({
  traceId,
  source: 'sdk',
  spans: [span(spanExtra)],
  ...extra,
});

const ingest = (traces: unknown[], who: Tenant = tenant) =>
  ctx.app.inject({ method: 'POST', url: '/api/traces', headers: who.headers, payload: { traces } });
const get = (url: string, who: Tenant = tenant) => ctx.app.inject({ method: 'GET', url, headers: who.headers });

/** `{"a":{"a":...{"leaf":1}}}` nested `depth` levels, as JSON text (no recursion anywhere). */
const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{"leaf":1}${'}'.repeat(depth - 1)}`;
/** A JSON body with raw JSON text spliced in where `"@@"` stands. */
const splice = (value: unknown, raw: string) => JSON.stringify(value).replace('"@@"', raw);
const postJson = (url: string, body: string, who: Tenant = tenant) =>
  ctx.app.inject({ method: 'POST', url, headers: { ...who.headers, 'content-type': 'application/json' }, payload: body });

describe('fault 1: text no store can hold', () => {
  it('repairs lone surrogates to U+FFFD in every string field, natively and through OTLP', async () => {
    const payload = JSON.stringify({
      traces: [
        trace(
          'sur-1',
          { name: 'n\ud800', sessionId: 's\udc00' },
          { name: 'x\ud800', model: 'm\udfff', attributes: { 'k\ud800': 'v\ud800' } },
        ),
      ],
    });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ accepted: 1, rejected: 0 });
    const stored = (await get('/api/traces/sur-1')).json().data;
    expect(stored).toMatchObject({ name: 'n\ufffd', sessionId: 's\ufffd', model: 'm\ufffd' });
    expect(stored.spans[0]).toMatchObject({ name: 'x\ufffd', attributes: { 'k\ufffd': 'v\ufffd' } });

    const otlp = JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc\ud800' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: 'aa'.repeat(16),
                  spanId: 'bb'.repeat(8),
                  name: 'chat\ud800',
                  kind: 1,
                  startTimeUnixNano: '1735689600000000000',
                  endTimeUnixNano: '1735689601000000000',
                  attributes: [{ key: 'gen_ai.request.model', value: { stringValue: 'gpt\udc00' } }],
                },
              ],
            },
          ],
        },
      ],
    });
    const viaOtlp = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp/v1/traces',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: otlp,
    });
    expect(viaOtlp.statusCode).toBe(200);
    expect(viaOtlp.json().data).toMatchObject({ rejected: 0 });
    const fromOtlp = (await get(`/api/traces/${'aa'.repeat(16)}`)).json().data;
    expect(fromOtlp.spans[0]).toMatchObject({ name: 'chat\ufffd', model: 'gpt\ufffd' });
  });

  it("never fails a second workspace's ingests while the first sends bad text", async () => {
    const bad = Array.from({ length: 20 }, (_, i) => ingest([trace(`bad-${i}`, {}, { name: `x\ud800${i}`, model: 'm\ud800' })]));
    const good = Array.from({ length: 20 }, (_, i) => ingest([trace(`good-${i}`)], other));
    const answers = await Promise.all([...bad, ...good]);
    for (const res of answers) expect(res.statusCode).toBe(200);
    expect((await get('/api/traces?limit=100', other)).json().meta.pagination.total).toBe(20);
  });
});

describe('fault 2: numbers', () => {
  it('refuses tokens, cost and durations out of their documented bounds, with the path', async () => {
    const res = await ingest([
      trace('num-1', {}, { inputTokens: 1e308 }),
      trace('num-2', {}, { outputTokens: 1.5 }),
      trace('num-3', {}, { totalTokens: -1 }),
      trace('num-4', {}, { costUsd: 1e300 }),
      trace('num-5', {}, { durationMs: 1e300 }),
      trace('num-ok', {}, { inputTokens: 1_000_000_000, costUsd: 1_000_000 }),
    ]);
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data).toMatchObject({ accepted: 1, rejected: 5 });
    expect(data.errors.map((e: { path: string }) => e.path)).toEqual([
      'traces.0.spans.0.inputTokens',
      'traces.1.spans.0.outputTokens',
      'traces.2.spans.0.totalTokens',
      'traces.3.spans.0.costUsd',
      'traces.4.spans.0.durationMs',
    ]);
  });

  it('reads every stored value, even sums that overflow (rows stored before the bounds)', async () => {
    const reader = await ctx.tenant();
    // Rows as older code stored them: straight into ClickHouse, past today's validation.
    const huge: Trace = {
      traceId: 'huge',
      source: 'sdk',
      spans: ['a', 'b', 'c'].map(
        (id, i) =>
          span({
            spanId: id,
            inputTokens: 1e308,
            outputTokens: 1e308,
            totalTokens: 1e308,
            costUsd: 1e308,
            // Two generation spans under an agent: both count (a generation span under another hides).
            ...(i > 0 ? { parentSpanId: 'a' } : { kind: 'agent' }),
          }) as Trace['spans'][number],
      ),
    };
    await ctx.writer.write(reader.workspaceId, toSpanRows(reader.workspaceId, [huge]), ['huge']);
    const list = await get('/api/traces', reader);
    expect(list.statusCode).toBe(200);
    expect(list.json().data[0].inputTokens).toBe(Number.MAX_VALUE);
    expect((await get('/api/traces/huge', reader)).statusCode).toBe(200);
    expect((await get('/api/traces?include=spans', reader)).statusCode).toBe(200);
    const stats = await get('/api/traces/stats?groupBy=model', reader);
    expect(stats.statusCode).toBe(200);
    expect((await get('/api/traces/stats?groupBy=source', reader)).statusCode).toBe(200);
    const analytics = await get(`/api/traces/analytics?startAfter=${at(-86_400_000)}&startBefore=${at(86_400_000)}&budget=10`, reader);
    expect(analytics.statusCode).toBe(200);
    expect(analytics.json().data.totals.costUsd).toBe(Number.MAX_VALUE);
  });
});

describe('fault 3: deep nesting', () => {
  it('refuses only the too-deep trace, with its path, and keeps its siblings', async () => {
    const body = [
      splice(trace('deep-attr', {}, { attributes: '@@' }), nested(5000)),
      JSON.stringify(trace('deep-ok')),
      splice(trace('deep-raw', {}, { input: { raw: '@@' } }), nested(5000)),
      splice(trace('deep-meta', {}, { metadata: '@@' }), nested(33)),
      splice(trace('deep-limit', {}, { metadata: '@@' }), nested(32)),
    ];
    const res = await postJson('/api/traces', `{"traces":[${body.join(',')}]}`);
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data).toMatchObject({ accepted: 2, rejected: 3 });
    expect(data.errors.map((e: { index: number }) => e.index)).toEqual([0, 2, 3]);
    expect(data.errors[0].path).toMatch(/^traces\.0\.spans\.0\.attributes(\.a)+$/);
    expect(data.errors[0].message).toMatch(/deeper than 32/);
    expect(data.errors[1].path).toMatch(/^traces\.2\.spans\.0\.input\.raw(\.a)+$/);
    expect((await get('/api/traces/deep-ok')).statusCode).toBe(200);
  });

  it('answers 400 to an OTLP body nested 5,000 deep, never a 500', async () => {
    const depth = 5000;
    const value = `${'{"kvlistValue":{"values":[{"key":"a","value":'.repeat(depth)}{"stringValue":"x"}${'}]}}'.repeat(depth)}`;
    const body =
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${'cd'.repeat(16)}","spanId":"${'ef'.repeat(8)}","name":"n",` +
      `"startTimeUnixNano":"1735689600000000000","endTimeUnixNano":"1735689601000000000","attributes":[{"key":"deep","value":${value}}]}]}]}]}`;
    const res = await postJson('/api/traces/otlp', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0].path).toMatch(/^body\.resourceSpans\.0\.scopeSpans\.0\.spans\.0\.attributes\.0\.value/);
  });

  it('refuses deep prompt metadata and output schemas with 400, never overflowing the stack', async () => {
    for (const field of ['metadata', 'outputSchema']) {
      const res = await postJson('/api/prompt', splice({ name: `deep-${field}`, systemPrompt: 'x', [field]: '@@' }, nested(2000)));
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      expect(res.json().error.details.issues[0].path).toMatch(new RegExp(`^body\\.${field}(\\.a)+$`));
    }
  });
});

describe('fault 4: NUL in text bound for PostgreSQL', () => {
  const prompt = (extra: Record<string, unknown>) =>
    ctx.app.inject({ method: 'POST', url: '/api/prompt', headers: tenant.headers, payload: { name: 'p', systemPrompt: 's', ...extra } });

  it.each([
    ['name', { name: 'a\u0000b' }, 'body.name'],
    ['systemPrompt', { systemPrompt: 'a\u0000b' }, 'body.systemPrompt'],
    ['humanPrompt', { humanPrompt: 'a\u0000b' }, 'body.humanPrompt'],
    ['description', { description: 'a\u0000b' }, 'body.description'],
    ['a metadata value', { metadata: { k: ['a\u0000'] } }, 'body.metadata.k.0'],
    ['a metadata key', { metadata: { 'k\u0000': 1 } }, 'body.metadata.k\u0000'],
  ])('answers 400 with the path for NUL in %s', async (_what, extra, path) => {
    const res = await prompt(extra);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    expect(res.json().error.details.issues[0].path).toBe(path);
  });

  it('answers 400 for NUL in the name filter and in an organization name', async () => {
    const filter = await get('/api/prompt?name=a%00b');
    expect(filter.statusCode).toBe(400);
    expect(filter.json().error.details.issues[0].path).toBe('querystring.name');
    const org = await ctx.app.inject({
      method: 'POST',
      url: '/api/admin/organizations',
      headers: ctx.adminHeaders,
      payload: { name: 'o\u0000', plan: 'free' },
    });
    expect(org.statusCode).toBe(400);
    expect(org.json().error.details.issues[0].path).toBe('body.name');
  });
});

describe('fault 5: long ids and framework answers', () => {
  it('reads and deletes a trace whose id is 128 characters', async () => {
    const id = 'i'.repeat(128);
    expect((await ingest([trace(id)])).json().data.accepted).toBe(1);
    expect((await get(`/api/traces/${id}`)).statusCode).toBe(200);
    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${id}`, headers: tenant.headers });
    expect(deleted.statusCode).toBe(200);
    expect((await get(`/api/traces/${id}`)).statusCode).toBe(404);
  });

  it('answers every framework error in the envelope with x-request-id and the security headers', async () => {
    const answers = [
      await get(`/api/traces/${'i'.repeat(2000)}`),
      await get('/api/traces/%zz'),
      await get('/nowhere'),
      await ctx.app.inject({
        method: 'POST',
        url: '/api/traces',
        headers: { ...tenant.headers, 'content-type': 'application/json' },
        payload: '{"traces":',
      }),
      await ctx.app.inject({
        method: 'POST',
        url: '/api/traces',
        headers: { ...tenant.headers, 'content-type': 'application/xml' },
        payload: '<x/>',
      }),
      await ctx.app.inject({
        method: 'POST',
        url: '/api/traces',
        headers: { ...tenant.headers, 'content-type': 'application/json' },
        payload: `{"traces":[],"pad":"${'x'.repeat(11 * 1024 * 1024)}"}`,
      }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([400, 400, 404, 400, 415, 413]);
    for (const res of answers) {
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBeTruthy();
      expect(res.json()).toMatchObject({
        error: { code: expect.any(String), message: expect.any(String) },
        meta: { requestId: res.headers['x-request-id'] },
      });
    }
  });
});

describe('fault 11: one message per bad field', () => {
  it('reports an endTime that is no date-time once', async () => {
    const res = await ingest([trace('one-msg', {}, { endTime: 'yesterday' })]);
    const errors = res.json().data.errors as Array<{ path: string }>;
    expect(errors.filter((e) => e.path === 'traces.0.spans.0.endTime')).toHaveLength(1);
  });

  it('reports a bad query parameter once', async () => {
    const res = await get('/api/traces?startAfter=yesterday');
    expect(res.statusCode).toBe(400);
    const issues = res.json().error.details.issues as Array<{ path: string }>;
    expect(issues.filter((i) => i.path === 'querystring.startAfter')).toHaveLength(1);
  });
});
