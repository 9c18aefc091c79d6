import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, trace, uniqueId } from './traces-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
let v1: Record<string, any>;
let v2: Record<string, any>;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  v1 = (await call('POST', '/api/prompt', { name: 'metered', systemPrompt: 'a' })).body.data;
  v2 = (
    await call('POST', `/api/prompt/${v1.id}/versions`, {
      newVersion: '1.1.0',
      changes: { systemPrompt: 'b', isLatest: true },
      labels: ['production'],
    })
  ).body.data;
  // Prepared spans: three calls of 1.0.0 (one error), two of 1.1.0 with ttft, one of a version
  // no record has, one of another prompt, and one of this prompt in another workspace.
  const llm = (version: string | undefined, o: Record<string, unknown> = {}) =>
    span({ kind: 'llm.chat', promptName: 'metered', ...(version ? { promptVersion: version } : {}), model: 'gpt-4o', ...o });
  const at = (minute: number) => ({
    startTime: `2025-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`,
    endTime: `2025-03-01T10:${String(minute).padStart(2, '0')}:01.000Z`,
  });
  const mine = [
    trace({ spans: [llm('1.0.0', { ...at(1), durationMs: 100, inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.01 })] }),
    trace({
      spans: [
        llm('1.0.0', { ...at(2), durationMs: 200, inputTokens: 20, outputTokens: 5, totalTokens: 25, costUsd: 0.02, status: 'error' }),
      ],
    }),
    trace({ spans: [llm('1.0.0', { ...at(3), durationMs: 300, inputTokens: 30, outputTokens: 5, totalTokens: 35, costUsd: 0.03 })] }),
    trace({
      spans: [
        llm('1.1.0', { ...at(4), durationMs: 50, totalTokens: 10, costUsd: 0.001, ttftMs: 20 }),
        llm('1.1.0', { ...at(5), durationMs: 70, totalTokens: 10, costUsd: 0.001, ttftMs: 40, parentSpanId: undefined }),
      ],
    }),
    trace({ spans: [llm('9.9.9', at(6))] }),
    trace({ spans: [span({ kind: 'llm.chat', promptName: 'another', promptVersion: '1.0.0', ...at(7) })] }),
  ];
  const res = await post(ctx, tenant, mine);
  expect(res.json().data).toMatchObject({ accepted: mine.length, rejected: 0 });
  await post(ctx, other, [trace({ spans: [llm('1.0.0', { ...at(8), costUsd: 5 })] })]);
  // A re-sent span replaces its earlier row: 1.0.0's first call re-sent with the same cost.
  const resent = mine[0]!;
  await post(ctx, tenant, [resent]);
});
afterAll(async () => {
  await ctx?.close();
});

type Json = Record<string, any>;
async function call(method: 'GET' | 'POST', url: string, payload?: Json, who?: Tenant) {
  const res = await ctx.app.inject({ method, url, headers: (who ?? tenant).headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
}

describe('GET /api/prompt/:id/metrics', () => {
  it('answers per version: calls, error rate, tokens, cost, latency p50/p95, ttft p50', async () => {
    const res = await call('GET', `/api/prompt/${v1.id}/metrics`);
    expect(res.status).toBe(200);
    const { versions } = res.body.data;
    expect(versions.map((v: Json) => [v.version, v.promptId])).toEqual([
      ['1.1.0', v2.id],
      ['1.0.0', v1.id],
      ['9.9.9', null],
    ]);
    const [newer, older, unknown] = versions;
    expect(older).toMatchObject({ calls: 3, errorCount: 1, inputTokens: 60, outputTokens: 15, totalTokens: 75, ttftMs: { p50: null } });
    expect(older.errorRate).toBeCloseTo(1 / 3);
    expect(older.costUsd).toBeCloseTo(0.06);
    expect(older.costPerCall).toBeCloseTo(0.02);
    expect(older.latencyMs.p50).toBe(200);
    expect(older.latencyMs.p95).toBeGreaterThan(200);
    expect(older.latencyMs.p95).toBeLessThanOrEqual(300);
    expect(newer).toMatchObject({
      labels: ['latest', 'production'],
      calls: 2,
      errorCount: 0,
      errorRate: 0,
      totalTokens: 20,
      ttftMs: { p50: 30 },
    });
    expect(unknown).toMatchObject({ calls: 1, labels: [] });
  });

  it('filters by start time and answers zeros for versions without calls', async () => {
    const res = await call('GET', `/api/prompt/${v1.id}/metrics?startAfter=2025-03-01T10:02:30Z&startBefore=2025-03-01T10:04:30Z`);
    const byVersion = Object.fromEntries(res.body.data.versions.map((v: Json) => [v.version, v]));
    expect(byVersion['1.0.0']).toMatchObject({ calls: 1 });
    expect(byVersion['1.1.0']).toMatchObject({ calls: 1, ttftMs: { p50: 20 } });
    expect(Object.keys(byVersion).sort()).toEqual(['1.0.0', '1.1.0']);
    const none = await call('GET', `/api/prompt/${v1.id}/metrics?startAfter=2030-01-01T00:00:00Z`);
    expect(none.body.data.versions).toEqual([
      expect.objectContaining({ version: '1.1.0', calls: 0, errorRate: 0, costPerCall: null, latencyMs: { p50: null, p95: null } }),
      expect.objectContaining({ version: '1.0.0', calls: 0 }),
    ]);
  });

  it('drops the spans of a deleted trace', async () => {
    const doomed = trace({
      traceId: uniqueId('doomed'),
      spans: [
        span({
          kind: 'llm.chat',
          promptName: 'metered',
          promptVersion: '1.0.0',
          startTime: '2025-03-02T10:00:00.000Z',
          endTime: '2025-03-02T10:00:01.000Z',
        }),
      ],
    });
    await post(ctx, tenant, [doomed]);
    const before = await call('GET', `/api/prompt/${v1.id}/metrics?startAfter=2025-03-02T00:00:00Z`);
    expect(before.body.data.versions.find((v: Json) => v.version === '1.0.0').calls).toBe(1);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${doomed.traceId}`, headers: tenant.headers })).statusCode).toBe(
      200,
    );
    const after = await call('GET', `/api/prompt/${v1.id}/metrics?startAfter=2025-03-02T00:00:00Z`);
    expect(after.body.data.versions.find((v: Json) => v.version === '1.0.0').calls).toBe(0);
  });

  it('bad input is 400; another workspace sees neither the prompt nor its spans', async () => {
    expect((await call('GET', `/api/prompt/${v1.id}/metrics?startAfter=yesterday`)).status).toBe(400);
    expect(
      (await call('GET', `/api/prompt/${v1.id}/metrics?startAfter=2025-03-02T00:00:00Z&startBefore=2025-03-01T00:00:00Z`)).status,
    ).toBe(400);
    expect((await call('GET', `/api/prompt/${v1.id}/metrics?other=1`)).status).toBe(400);
    expect((await call('GET', `/api/prompt/${v1.id}/metrics`, undefined, other)).status).toBe(404);
    // The other workspace's own prompt of the same name counts only its own span.
    const theirs = (await call('POST', '/api/prompt', { name: 'metered', systemPrompt: 'x' }, other)).body.data;
    const res = await call('GET', `/api/prompt/${theirs.id}/metrics`, undefined, other);
    expect(res.body.data.versions).toEqual([expect.objectContaining({ version: '1.0.0', calls: 1, costUsd: 5 })]);
  });
});
