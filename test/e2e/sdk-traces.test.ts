import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Loupe, SESSION_EVENTS, type LoupeError, type SpanPayload } from '../../packages/sdk/src/index.js';
import { buildApp } from '../../src/app.js';
import { startListeningService, type ListeningService } from './sdk-server.js';

let service: ListeningService;
beforeAll(async () => {
  service = await startListeningService();
});
afterAll(async () => {
  await service?.close();
});

function client(options: { batchSize?: number; baseUrl?: string; retryBaseDelayMs?: number } = {}) {
  const errors: LoupeError[] = [];
  const loupe = new Loupe({
    apiKey: service.apiKey,
    baseUrl: service.baseUrl,
    environment: 'development',
    env: {},
    onError: (e) => errors.push(e),
    ...options,
  });
  return { loupe, errors };
}

/** A small fake agent: retrieval, an LLM call with usage, a tool that fails and is recovered from. */
function fakeAgent(loupe: Loupe) {
  const retrieve = loupe.wrap(
    async (query: string) => {
      await sleep(2);
      return [{ content: `notes about ${query}`, score: 0.9 }];
    },
    { name: 'retrieve', kind: 'retrieval' },
  );
  const callModel = (prompt: string) =>
    loupe.withSpan('chat', { kind: 'llm.chat', input: { messages: [{ role: 'user', content: prompt }] } }, async (span) => {
      await sleep(3);
      span.setMetrics({ model: 'fake-model-1', provider: 'fake', inputTokens: 120, outputTokens: 30, costUsd: 0.0021, ttftMs: 1 });
      span.setOutput({ messages: [{ role: 'assistant', content: 'It is 42.' }] });
      return 'It is 42.';
    });
  const calculator = loupe.wrap(
    async (expression: string) => {
      throw new Error(`cannot evaluate ${expression}`);
    },
    { name: 'calculator', kind: 'tool' },
  );
  return loupe.wrap(
    async function researchAgent(question: string, options: { fail?: boolean } = {}) {
      const traceId = loupe.currentSpan()!.traceId;
      const docs = await retrieve(question);
      await calculator('6 * 7').catch(() => undefined);
      const answer = await callModel(`${question}\n${docs.map((d) => d.content).join('\n')}`);
      if (options.fail) throw new Error('agent gave up');
      return { traceId, answer };
    },
    { kind: 'agent' },
  );
}

async function readTrace(traceId: string) {
  const res = await service.call('GET', `/api/traces/${traceId}`);
  expect(res.status).toBe(200);
  const detail = res.body.data as { spans: SpanPayload[] } & Record<string, unknown>;
  const byName = (name: string) => detail.spans.find((s) => s.name === name)!;
  return { detail, byName };
}

describe('SDK against the listening service', () => {
  it('a traced agent run appears as the right span tree with the right statuses', async () => {
    // batchSize 2: the trace arrives over several payloads, children before their root.
    const { loupe, errors } = client({ batchSize: 2 });
    const agent = fakeAgent(loupe);
    const { traceId } = await agent('What is six times seven?');
    await loupe.shutdown();
    expect(errors).toEqual([]);
    expect(loupe.stats()).toMatchObject({ sent: 4, dropped: 0, rejected: 0, queued: 0 });
    expect(loupe.stats().requests).toBeGreaterThanOrEqual(2);

    const { detail, byName } = await readTrace(traceId);
    expect(detail).toMatchObject({
      traceId,
      name: 'researchAgent',
      source: 'sdk',
      environment: 'development',
      status: 'completed',
      traceKind: 'agent',
      spanCount: 4,
      errorCount: 1,
      model: 'fake-model-1',
      inputTokens: 120,
      outputTokens: 30,
      totalTokens: 150,
    });
    const root = byName('researchAgent');
    expect(root).toMatchObject({ kind: 'agent', status: 'ok', input: { raw: ['What is six times seven?'] } });
    expect(root.parentSpanId).toBeUndefined();
    expect(byName('retrieve')).toMatchObject({ kind: 'retrieval', status: 'ok', parentSpanId: root.spanId });
    expect(byName('calculator')).toMatchObject({
      kind: 'tool',
      status: 'error',
      statusMessage: 'cannot evaluate 6 * 7',
      parentSpanId: root.spanId,
    });
    expect(byName('chat')).toMatchObject({
      kind: 'llm.chat',
      status: 'ok',
      parentSpanId: root.spanId,
      model: 'fake-model-1',
      costUsd: 0.0021,
      output: { messages: [{ role: 'assistant', content: 'It is 42.' }] },
      ttftMs: 1,
    });
    expect(root.durationMs).toBeGreaterThanOrEqual(byName('chat').durationMs);
    expect(Date.parse(byName('chat').startTime)).toBeGreaterThanOrEqual(Date.parse(root.startTime));
  });

  it('a run that throws leaves an error root span with the message, and an error trace', async () => {
    const { loupe, errors } = client();
    const agent = fakeAgent(loupe);
    await agent('Will it fail?', { fail: true }).catch(() => undefined);
    await loupe.shutdown();
    expect(errors).toEqual([]);
    const list = await service.call('GET', '/api/traces?status=error&environment=development');
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const { detail, byName } = await readTrace(list.body.data[0].traceId);
    expect(detail).toMatchObject({ status: 'error', errorCount: 2, spanCount: 4 });
    expect(byName('researchAgent')).toMatchObject({ status: 'error', statusMessage: 'agent gave up' });
    expect(byName('chat')).toMatchObject({ status: 'ok' });
  });

  it('the coding-assistant convention produces the tree SPEC.md describes', async () => {
    const { loupe, errors } = client({ batchSize: 3 });
    const session = loupe.session({ sessionId: `sess-${Date.now()}`, name: 'coding-session' });
    session.start({ cwd: '/repo' });
    session.turn('Make the tests pass');
    session.toolCall('Read', { file_path: 'src/app.ts' }).ok('export {}');
    session.toolCall('Bash', { command: 'npm test' }).fail('exit code 1');
    const reviewer = session.subAgent('reviewer', { input: 'review the diff' });
    reviewer.toolCall('Grep', { pattern: 'TODO' }).ok([]);
    session.compaction({ trigger: 'auto' });
    reviewer.end('looks fine');
    session.stop({ output: 'Done.' });
    session.turn('Thanks');
    session.stop();
    session.end();
    await loupe.shutdown();
    expect(errors).toEqual([]);

    const listed = await service.call('GET', `/api/traces?sessionId=${session.sessionId}`);
    expect(listed.body.data).toHaveLength(1);
    const { detail, byName } = await readTrace(listed.body.data[0].traceId);
    expect(detail).toMatchObject({
      name: 'coding-session',
      sessionId: session.sessionId,
      status: 'completed',
      traceKind: 'agent',
      spanCount: 7,
      errorCount: 1,
    });

    const root = byName('coding-session');
    expect(root).toMatchObject({ kind: 'agent', status: 'ok' });
    expect(root.parentSpanId).toBeUndefined();
    const turn1 = byName('turn 1');
    const turn2 = byName('turn 2');
    expect(turn1).toMatchObject({ kind: 'chain', status: 'ok', parentSpanId: root.spanId });
    expect(turn2).toMatchObject({ kind: 'chain', status: 'ok', parentSpanId: root.spanId });
    expect(byName('Read')).toMatchObject({ kind: 'tool', status: 'ok', parentSpanId: turn1.spanId });
    expect(byName('Bash')).toMatchObject({ kind: 'tool', status: 'error', statusMessage: 'exit code 1', parentSpanId: turn1.spanId });
    const reviewerSpan = byName('reviewer');
    expect(reviewerSpan).toMatchObject({ kind: 'agent', status: 'ok', parentSpanId: turn1.spanId });
    expect(byName('Grep')).toMatchObject({ kind: 'tool', status: 'ok', parentSpanId: reviewerSpan.spanId });
    // Compaction and stop are events, never spans.
    expect(reviewerSpan.events?.map((e) => e.name)).toEqual([SESSION_EVENTS.compaction]);
    expect(turn1.events?.map((e) => e.name)).toEqual([SESSION_EVENTS.stop]);
    expect(turn2.events?.map((e) => e.name)).toEqual([SESSION_EVENTS.stop]);
    expect(detail.spans.some((s) => s.kind === 'custom')).toBe(false);
  });

  it('a trace the service refuses is reported with its path and not re-sent; the others of the payload are stored', async () => {
    const { loupe, errors } = client();
    const bad = loupe.startSpan('', { kind: 'tool' }); // a span name may not be empty
    bad.end();
    const good = loupe.startSpan('fine', { kind: 'tool' });
    good.end();
    await loupe.shutdown();
    expect(loupe.stats()).toMatchObject({ sent: 1, rejected: 1, requests: 1 });
    expect(errors).toHaveLength(1);
    expect(errors[0]!.kind).toBe('rejected');
    expect(errors[0]!.details.errors![0]).toMatchObject({ index: 0, traceId: bad.traceId });
    expect(errors[0]!.details.errors![0]!.path).toMatch(/spans\.0\.name$/);
    expect((await service.call('GET', `/api/traces/${good.traceId}`)).status).toBe(200);
    expect((await service.call('GET', `/api/traces/${bad.traceId}`)).status).toBe(404);
  });

  it('a backlog, large inputs among it, goes out in few requests the service accepts, nothing lost', async () => {
    const { loupe, errors } = client();
    const large = 'x'.repeat(1.5 * 1024 * 1024);
    const traceIds: string[] = [];
    // Ended in one go, as items finishing faster than requests return: 600 spans over 200 traces,
    // every 25th trace's root with a 1.5 MiB input: 12 MiB in all, over the service's body limit.
    for (let t = 0; t < 200; t++) {
      const root = loupe.startSpan(`item ${t}`, { kind: 'agent', ...(t % 25 === 0 ? { input: large } : {}) });
      loupe.startSpan('task', { parent: root, kind: 'tool' }).end();
      loupe.startSpan('judge', { parent: root, kind: 'llm.chat' }).end();
      root.end();
      traceIds.push(root.traceId);
    }
    await loupe.shutdown();
    expect(errors).toEqual([]);
    expect(loupe.stats()).toMatchObject({ queued: 0, sent: 600, dropped: 0, rejected: 0 });
    // 10 at a time would take 60 requests; two large inputs fit in one.
    expect(loupe.stats().requests).toBeLessThanOrEqual(8);
    for (const t of [0, 1, 25, 199]) {
      const { detail } = await readTrace(traceIds[t]!);
      expect(detail.spans.map((s) => s.name).sort()).toEqual([`item ${t}`, 'judge', 'task']);
    }
    const { byName } = await readTrace(traceIds[150]!);
    expect(byName('item 150').input?.text).toBe(large);
  });

  it('spans ended while the service is down arrive once it is back (retries with backoff)', async () => {
    // A free port with nothing on it yet.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));

    const { loupe, errors } = client({ baseUrl: `http://127.0.0.1:${port}`, retryBaseDelayMs: 300 });
    const span = loupe.startSpan('while-down', { kind: 'agent' });
    span.end({ status: 'ok' });
    void loupe.flush(); // first attempt: connection refused; retries after 300 ms, 600 ms, 1200 ms
    await sleep(100);
    const second = await buildApp({ config: service.stores.config, sql: service.stores.sql, clickhouse: service.stores.clickhouse });
    await second.listen({ port, host: '127.0.0.1' });
    try {
      await loupe.shutdown();
      expect(errors).toEqual([]);
      expect(loupe.stats()).toMatchObject({ sent: 1, dropped: 0 });
      expect(loupe.stats().requests).toBeGreaterThanOrEqual(2);
      const res = await service.call('GET', `/api/traces/${span.traceId}`);
      expect(res.body.data).toMatchObject({ status: 'completed', spanCount: 1 });
    } finally {
      await second.close();
    }
  });
});
