import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { sendTraces } from './analytics-fixtures.js';
import { createMonitorEvaluator, type MonitorEvaluator } from '../../src/monitors/service/evaluator.js';
import { createMonitorScheduler } from '../../src/monitors/service/scheduler.js';
import { loadConfig } from '../../src/config.js';
import { monitorMetricReader } from '../../src/traces/tables/monitor-metrics-table.js';
import { enqueueEvent } from '../../src/prompts/tables/webhook-outbox-table.js';
import { createWebhookWorker } from '../../src/prompts/service/webhook-worker.js';
import { verifySignature } from '../../src/prompts/model/webhook-signature.js';
import { createTargetGuard } from '../../src/egress/target-guard.js';
import { connectPostgres, type Sql } from '../../src/stores/postgres.js';

type Json = Record<string, any>;

/**
 * Prepared data with known figures, in hour windows ending at NOON (the fixed clock):
 * previous hour [10:00, 11:00): p1 production gpt-4o $0.5 ok.
 * this hour [11:00, 12:00): w1 production gpt-4o user u1 tag beta name chat $0.5 error 3000 ms;
 *   w2 production gpt-4o user u2 name chat $0.5 ok 1000 ms; w3 staging claude user u1 name search $0.5 ok 2000 ms.
 * Workspace B has the same traces, ten times the cost, and its own webhook endpoint.
 */
const NOON = new Date('2026-05-01T12:00:00Z');
const HOUR = 3_600_000;
const at = (ms: number) => new Date(NOON.getTime() + ms);

function trace(id: string, start: Date, fields: Json, opts: { cost: number; error?: boolean; durationMs: number; model: string }) {
  return {
    traceId: id,
    source: 'sdk',
    ...fields,
    spans: [
      {
        spanId: 'root',
        name: 'root',
        kind: 'llm.chat',
        startTime: start.toISOString(),
        endTime: new Date(start.getTime() + opts.durationMs).toISOString(),
        durationMs: opts.durationMs,
        status: opts.error ? 'error' : 'ok',
        model: opts.model,
        provider: 'p',
        inputTokens: 10,
        outputTokens: 10,
        totalTokens: 20,
        costUsd: opts.cost,
      },
    ],
  };
}

const traces = (scale: number) => [
  trace(
    'p1',
    at(-2 * HOUR + 60_000),
    { environment: 'production', name: 'chat' },
    { cost: 0.5 * scale, durationMs: 1000, model: 'gpt-4o' },
  ),
  trace(
    'w1',
    at(-HOUR + 60_000),
    { environment: 'production', name: 'chat', userId: 'u1', tags: ['beta'] },
    { cost: 0.5 * scale, error: true, durationMs: 3000, model: 'gpt-4o' },
  ),
  trace(
    'w2',
    at(-HOUR + 120_000),
    { environment: 'production', name: 'chat', userId: 'u2' },
    { cost: 0.5 * scale, durationMs: 1000, model: 'gpt-4o' },
  ),
  trace(
    'w3',
    at(-HOUR + 180_000),
    { environment: 'staging', name: 'search', userId: 'u1' },
    { cost: 0.5 * scale, durationMs: 2000, model: 'claude' },
  ),
];

let ctx: TestContext;
let a: Tenant;
let b: Tenant;
let clock = NOON;
let evaluator: MonitorEvaluator;

const evaluatorOn = (sql: Sql) =>
  createMonitorEvaluator({ sql, metrics: monitorMetricReader(ctx.clickhouse), enqueue: enqueueEvent, now: () => clock });

beforeAll(async () => {
  ctx = await createTestContext({ env: { LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true' }, ingestAck: 'store' });
  a = await ctx.tenant();
  b = await ctx.tenant();
  await sendTraces(ctx.app, a.headers, traces(1));
  await sendTraces(ctx.app, b.headers, traces(10));
  const scores = await ctx.app.inject({
    method: 'POST',
    url: '/api/scores',
    headers: a.headers,
    payload: {
      scores: [
        { traceId: 'w1', name: 'quality', value: 0.2, timestamp: at(-30 * 60_000).toISOString() },
        { traceId: 'w3', name: 'quality', value: 0.4, timestamp: at(-20 * 60_000).toISOString() },
      ],
    },
  });
  expect(scores.statusCode, scores.body).toBeLessThan(300);
  evaluator = evaluatorOn(ctx.sql);
});
afterAll(async () => {
  await ctx?.close();
});

async function call(who: Tenant, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Json) {
  const res = await ctx.app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
}

async function createMonitor(who: Tenant, body: Json): Promise<Json> {
  const res = await call(who, 'POST', '/api/monitors', { name: 'm', windowSeconds: 3600, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

/** The monitor as stored now, with its workspace, as an evaluation round reads it. */
async function stored(who: Tenant, id: string) {
  const res = await call(who, 'GET', `/api/monitors/${id}`);
  return { ...res.body.data, workspaceId: who.workspaceId };
}

const evaluate = async (who: Tenant, id: string, using = evaluator) => using.evaluate(await stored(who, id));

const eventsOf = async (monitorId: string) =>
  await ctx.sql<Array<{ type: string; workspaceId: string }>>`
    select type, workspace_id as "workspaceId" from webhook_events where data->>'monitorId' = ${monitorId} order by created_at`;

describe('monitors', () => {
  it('a threshold monitor fires once and resolves once, with its episode in the history', async () => {
    await call(a, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['monitor.firing', 'monitor.resolved'] });
    clock = NOON;
    const m = await createMonitor(a, { metric: 'cost', condition: { kind: 'threshold', direction: 'above', value: 1 } });
    expect(m.state).toBe('ok');
    expect(await evaluate(a, m.id)).toBe('fired');
    const firing = await stored(a, m.id);
    expect(firing).toMatchObject({ state: 'firing', lastValue: 1.5, lastEvaluatedAt: NOON.toISOString() });
    expect(await evaluate(a, m.id)).toBe('unchanged');
    clock = at(30 * 60_000); // the window [11:30, 12:30) holds no trace: $0
    expect(await evaluate(a, m.id)).toBe('resolved');
    expect(await evaluate(a, m.id)).toBe('unchanged');
    expect((await stored(a, m.id)).state).toBe('resolved');

    const history = await call(a, 'GET', `/api/monitors/${m.id}/history`);
    expect(history.body.data).toEqual([
      { id: firing.episodeId, firedAt: NOON.toISOString(), firedValue: 1.5, resolvedAt: clock.toISOString(), resolvedValue: 0 },
    ]);
    expect(await eventsOf(m.id)).toEqual([
      { type: 'monitor.firing', workspaceId: a.workspaceId },
      { type: 'monitor.resolved', workspaceId: a.workspaceId },
    ]);
    await ctx.sql`delete from webhooks`;
  });

  it('a change monitor compares with the previous window', async () => {
    clock = NOON;
    // trace count: 1 in the previous hour, 3 in this one (+200%).
    const up = await createMonitor(a, { metric: 'trace_count', condition: { kind: 'change', direction: 'above', percent: 150 } });
    const tooHigh = await createMonitor(a, { metric: 'trace_count', condition: { kind: 'change', direction: 'above', percent: 250 } });
    const down = await createMonitor(a, { metric: 'trace_count', condition: { kind: 'change', direction: 'below', percent: 10 } });
    expect(await evaluate(a, up.id)).toBe('fired');
    expect((await stored(a, up.id)).lastValue).toBe(3);
    expect(await evaluate(a, tooHigh.id)).toBe('unchanged');
    expect(await evaluate(a, down.id)).toBe('unchanged');
    // An hour later: 0 against 3, a fall of 100%.
    clock = at(HOUR);
    expect(await evaluate(a, up.id)).toBe('resolved');
    expect(await evaluate(a, down.id)).toBe('fired');
  });

  it('measures each metric and filter on the prepared data', async () => {
    clock = NOON;
    const cases: Array<[Json, number]> = [
      [{ metric: 'error_rate' }, 1 / 3],
      [{ metric: 'latency_p95' }, 3000],
      [{ metric: 'unpriced_spans' }, 0],
      [{ metric: 'score_mean', scoreName: 'quality' }, 0.3],
      [{ metric: 'score_mean', scoreName: 'quality', filters: { environment: 'staging' } }, 0.4],
      [{ metric: 'trace_count', filters: { environment: 'staging' } }, 1],
      [{ metric: 'trace_count', filters: { model: 'gpt-4o' } }, 2],
      [{ metric: 'trace_count', filters: { name: 'search' } }, 1],
      [{ metric: 'trace_count', filters: { tag: 'beta' } }, 1],
      [{ metric: 'trace_count', filters: { userId: 'u1' } }, 2],
      [{ metric: 'cost', filters: { userId: 'u1', environment: 'production' } }, 0.5],
    ];
    for (const [definition, expected] of cases) {
      const m = await createMonitor(a, { ...definition, condition: { kind: 'threshold', direction: 'above', value: 1e9 } });
      expect(await evaluate(a, m.id)).toBe('unchanged');
      expect((await stored(a, m.id)).lastValue, JSON.stringify(definition)).toBeCloseTo(expected, 9);
    }
    // A filtered threshold fires where the unfiltered one would not, and the reverse.
    const staging = await createMonitor(a, {
      metric: 'trace_count',
      filters: { environment: 'staging' },
      condition: { kind: 'threshold', direction: 'below', value: 2 },
    });
    expect(await evaluate(a, staging.id)).toBe('fired');
    const all = await createMonitor(a, { metric: 'trace_count', condition: { kind: 'threshold', direction: 'below', value: 2 } });
    expect(await evaluate(a, all.id)).toBe('unchanged');
  });

  it('two evaluators racing on one monitor transition it once', async () => {
    // A second pool: another service instance's connections.
    const other = connectPostgres(ctx.postgresUrl, { max: 4 });
    try {
      const second = evaluatorOn(other);
      for (let round = 0; round < 5; round += 1) {
        clock = NOON;
        const m = await createMonitor(a, { metric: 'cost', condition: { kind: 'threshold', direction: 'above', value: 1 } });
        const snapshot = await stored(a, m.id);
        const fired = await Promise.all([evaluator.evaluate(snapshot), second.evaluate(snapshot), evaluator.evaluate(snapshot)]);
        expect(fired.filter((t) => t === 'fired')).toHaveLength(1);
        clock = at(30 * 60_000);
        const firing = await stored(a, m.id);
        const resolved = await Promise.all([evaluator.evaluate(firing), second.evaluate(firing), evaluator.evaluate(firing)]);
        expect(resolved.filter((t) => t === 'resolved')).toHaveLength(1);
        expect((await call(a, 'GET', `/api/monitors/${m.id}/history`)).body.data).toHaveLength(1);
      }
    } finally {
      await other.end();
    }
  });

  it('delivers firing and resolution signed to the workspace’s endpoint, never to another workspace', async () => {
    const secret = 'monitor-secret-0123456789';
    const receiverA = await startReceiver();
    const receiverB = await startReceiver();
    try {
      const events = ['monitor.firing', 'monitor.resolved'];
      expect((await call(a, 'POST', '/api/webhooks', { url: receiverA.url, events, secret })).status).toBe(201);
      expect((await call(b, 'POST', '/api/webhooks', { url: receiverB.url, events, secret })).status).toBe(201);
      clock = NOON;
      const m = await createMonitor(a, { metric: 'error_rate', condition: { kind: 'threshold', direction: 'above', value: 0.25 } });
      expect(await evaluate(a, m.id)).toBe('fired');
      clock = at(2 * HOUR); // no trace: no error rate; the episode stays open
      expect(await evaluate(a, m.id)).toBe('unchanged');
      clock = NOON;
      const healthier = { ...(await stored(a, m.id)), condition: { kind: 'threshold', direction: 'above', value: 0.5 } };
      expect(await evaluator.evaluate(healthier)).toBe('resolved');

      const worker = createWebhookWorker({
        sql: ctx.sql,
        guard: createTargetGuard({ allowPrivate: true, allowSetting: 'LOUPE_WEBHOOK_ALLOW_PRIVATE' }),
        timeoutMs: 2_000,
      });
      while ((await worker.runOnce()) > 0);
      expect(receiverA.received).toHaveLength(2);
      // Deliveries go out in parallel lanes, so they may arrive in either order; a receiver
      // orders events by their createdAt.
      const bodies = receiverA.received
        .map((r) => {
          expect(verifySignature(secret, r.body, String(r.headers['x-loupe-signature']), Math.floor(Date.now() / 1000))).toBe(true);
          return JSON.parse(r.body) as Json;
        })
        .sort((x, y) => Date.parse(String(x.createdAt)) - Date.parse(String(y.createdAt)));
      expect(bodies.map((e) => [e.type, e.workspaceId, e.data.monitorId])).toEqual([
        ['monitor.firing', a.workspaceId, m.id],
        ['monitor.resolved', a.workspaceId, m.id],
      ]);
      expect(bodies[0]!.data).toMatchObject({ metric: 'error_rate', value: 1 / 3, evaluatedAt: NOON.toISOString() });
      expect(bodies[0]!.data.episodeId).toBe(bodies[1]!.data.episodeId);
      expect(receiverB.received).toHaveLength(0);
    } finally {
      await receiverA.close();
      await receiverB.close();
    }
  });

  it('evaluates every enabled monitor on the schedule, and never when the interval is 0', async () => {
    expect(loadConfig({}).LOUPE_MONITOR_INTERVAL_MS).toBe(60_000);
    clock = NOON;
    const m = await createMonitor(a, { metric: 'trace_count', condition: { kind: 'threshold', direction: 'above', value: 2 } });
    const off = await createMonitor(a, {
      metric: 'trace_count',
      enabled: false,
      condition: { kind: 'threshold', direction: 'above', value: 2 },
    });
    const never = createMonitorScheduler(evaluator, 0);
    never.start();
    await new Promise((r) => setTimeout(r, 200));
    await never.stop();
    expect((await stored(a, m.id)).state).toBe('ok');
    const scheduler = createMonitorScheduler(evaluator, 50);
    scheduler.start();
    try {
      const deadline = Date.now() + 10_000;
      while ((await stored(a, m.id)).state !== 'firing') {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await scheduler.stop();
    }
    expect((await stored(a, off.id)).lastEvaluatedAt).toBeNull();
  });

  it('keeps each workspace’s monitors to itself', async () => {
    const m = await createMonitor(a, { metric: 'cost', condition: { kind: 'threshold', direction: 'above', value: 1 } });
    expect((await call(b, 'GET', `/api/monitors/${m.id}`)).status).toBe(404);
    expect((await call(b, 'GET', `/api/monitors/${m.id}/history`)).status).toBe(404);
    expect((await call(b, 'DELETE', `/api/monitors/${m.id}`)).status).toBe(404);
    expect((await call(b, 'GET', '/api/monitors')).body.data.map((x: Json) => x.id)).not.toContain(m.id);
    // B's own cost monitor sees B's figures only ($15 this hour), never A's.
    clock = NOON;
    const mb = await createMonitor(b, { metric: 'cost', condition: { kind: 'threshold', direction: 'above', value: 1e9 } });
    await evaluate(b, mb.id);
    expect((await stored(b, mb.id)).lastValue).toBeCloseTo(15, 9);
  });

  it('updates and deletes a monitor', async () => {
    const m = await createMonitor(a, { metric: 'cost', condition: { kind: 'threshold', direction: 'above', value: 1 } });
    const put = await call(a, 'PUT', `/api/monitors/${m.id}`, {
      name: 'renamed',
      metric: 'latency_p95',
      windowSeconds: 600,
      filters: { model: 'gpt-4o' },
      condition: { kind: 'change', direction: 'above', percent: 50 },
      enabled: false,
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ name: 'renamed', metric: 'latency_p95', windowSeconds: 600, enabled: false, state: 'ok' });
    expect((await call(a, 'DELETE', `/api/monitors/${m.id}`)).body.data).toEqual({ id: m.id, deleted: true });
    expect((await call(a, 'GET', `/api/monitors/${m.id}`)).status).toBe(404);
  });

  it('refuses bad definitions naming the path', async () => {
    const good = { name: 'm', metric: 'cost', windowSeconds: 3600, condition: { kind: 'threshold', direction: 'above', value: 1 } };
    const cases: Array<[Json, string]> = [
      [{ ...good, metric: 'tokens' }, 'body.metric'],
      [{ ...good, windowSeconds: 5 }, 'body.windowSeconds'],
      [{ ...good, condition: { kind: 'change', direction: 'above', percent: -5 } }, 'body.condition.percent'],
      [{ ...good, condition: { kind: 'threshold', direction: 'sideways', value: 1 } }, 'body.condition.direction'],
      [{ ...good, metric: 'score_mean' }, 'body.scoreName'],
      [{ ...good, scoreName: 'quality' }, 'body.scoreName'],
      [{ ...good, filters: { environment: '' } }, 'body.filters.environment'],
    ];
    for (const [payload, path] of cases) {
      const res = await call(a, 'POST', '/api/monitors', payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(
        res.body.error.details.issues.map((i: { path: string }) => i.path),
        JSON.stringify(payload),
      ).toContain(path);
    }
    expect((await call(a, 'GET', '/api/monitors/not-a-uuid')).status).toBe(400);
  });
});
