import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatorWorkerFor } from '../../src/app.js';
import { createConnectionRateLimiter } from '../../src/evaluators/service/rate-limiter.js';
import type { EvaluatorWorker } from '../../src/evaluators/service/worker.js';
import { connectPostgres } from '../../src/stores/postgres.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-model-provider.js';
import { post, span, trace, uniqueId } from './traces-fixtures.js';

/**
 * Evaluators' targets (spans, experiment run items, a backfill), the judge's own trace, the
 * per-connection rate limit, and the queue across a restart and across two instances, against a
 * local fake OpenAI-compatible server.
 */

const ENCRYPTION_KEY = 'cd'.repeat(32);
const noRetryWait = { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 };

describe('evaluator targets and execution', () => {
  let ctx: TestContext;
  let tenant: Tenant;
  let fake: FakeProvider;
  let worker: EvaluatorWorker;

  beforeAll(async () => {
    fake = await startFakeProvider();
    ctx = await createTestContext({
      env: { LOUPE_ENCRYPTION_KEY: ENCRYPTION_KEY, LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true' },
      ingestAck: 'store',
    });
    tenant = await ctx.tenant();
    worker = evaluatorWorkerFor(ctx, { retry: noRetryWait });
  });
  afterAll(async () => {
    await ctx?.close();
    await fake?.close();
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: object, who: Tenant = tenant) =>
    ctx.app.inject({ method, url, headers: who.headers, ...(payload && { payload }) });

  async function created(method: 'POST', url: string, payload: object, who: Tenant = tenant) {
    const res = await call(method, url, payload, who);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: string; name: string };
  }

  const connection = (who: Tenant = tenant, extra: object = {}) =>
    created(
      'POST',
      '/api/model-connections',
      { name: uniqueId('conn'), provider: 'openai', baseUrl: fake.url, apiKey: 'sk-fake-key-1234', defaultModel: 'gpt-4o-mini', ...extra },
      who,
    );

  async function judgePrompt(humanPrompt: string, who: Tenant = tenant) {
    const name = uniqueId('judge');
    await created('POST', '/api/prompt', { name, systemPrompt: 'You grade answers.', humanPrompt }, who);
    return name;
  }

  async function judge(target: object, options: { who?: Tenant; variables?: object; humanPrompt?: string; connectionId?: string } = {}) {
    const who = options.who ?? tenant;
    const connectionId = options.connectionId ?? (await connection(who)).id;
    return created(
      'POST',
      '/api/evaluators',
      {
        name: uniqueId('ev'),
        type: 'llm_judge',
        judge: {
          connectionId,
          prompt: { name: await judgePrompt(options.humanPrompt ?? 'Question: {question}\nAnswer: {answer}', who) },
          variables: options.variables ?? { question: 'input', answer: 'output' },
        },
        score: { name: 'correctness', dataType: 'numeric' },
        target: { delaySeconds: 0, ...target },
      },
      who,
    );
  }

  /** The root span of a running trace (starting at `start`, lasting `durationMs`), sent with its child and applied. */
  async function sendRoot(running: ReturnType<typeof trace>, child: ReturnType<typeof span>, start: number, durationMs: number) {
    const root = span({
      spanId: 'root',
      kind: 'agent',
      startTime: new Date(start).toISOString(),
      endTime: new Date(start + durationMs).toISOString(),
      durationMs,
    });
    expect((await post(ctx, tenant, [{ ...running, spans: [root, child] }])).json().data.accepted).toBe(1);
    await ctx.writer.settled();
  }

  /** Finished traces named `name`, started now, each asking `question`. */
  function finishedTraces(name: string, count: number, question = 'What is 2 + 2?', extra: object = {}) {
    const now = Date.now();
    return Array.from({ length: count }, () =>
      trace({
        name,
        ...extra,
        spans: [
          span({
            kind: 'agent',
            startTime: new Date(now).toISOString(),
            endTime: new Date(now + 5).toISOString(),
            durationMs: 5,
            input: { text: question },
            output: { text: '4' },
          }),
        ],
      }),
    );
  }

  /** Finished traces named `name`, sent and applied. */
  async function newTraces(name: string, count: number, question = 'What is 2 + 2?', who: Tenant = tenant, extra: object = {}) {
    const traces = finishedTraces(name, count, question, extra);
    const res = await post(ctx, tenant === who ? tenant : who, traces);
    expect(res.json().data.accepted).toBe(count);
    // Answered once logged; the scan reads the store: the writes are applied first.
    await ctx.writer.settled();
    return traces.map((t) => t.traceId);
  }

  const jobsOf = async (evaluatorId: string, who: Tenant = tenant) =>
    (await call('GET', `/api/evaluators/${evaluatorId}/jobs?limit=500`, undefined, who)).json().data as {
      traceId: string;
      spanId: string | null;
      runId: string | null;
      datasetItemId: string | null;
      status: string;
      attempts: number;
      scoreId: string | null;
      judgeTraceId: string | null;
    }[];
  const scoresOf = async (traceId: string, who: Tenant = tenant) =>
    (await call('GET', `/api/scores?traceId=${traceId}`, undefined, who)).json().data as {
      id: string;
      spanId: string | null;
      evalTraceId: string | null;
      metadata: Record<string, unknown>;
      value: number;
      createdAt: string;
    }[];
  const requestsAsking = (marker: string) => fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker)).length;

  async function until(condition: () => Promise<boolean>, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('timed out waiting');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('each judge call is a trace of the workspace (source evaluator) with tokens and cost; the score and the job name it; it is never a target', async () => {
    const who = await ctx.tenant();
    // No filter at all: every trace of the workspace is a target, except the judge's own.
    const ev = await judge({}, { who });
    const [traceId] = await newTraces(uniqueId('any'), 1, 'What is 2 + 2?', who);
    fake.answer = { value: 0.75, reasoning: 'close enough' };
    await worker.scan();
    await worker.runOnce();

    const [job] = await jobsOf(ev.id, who);
    expect(job).toMatchObject({ traceId, status: 'succeeded', spanId: null, runId: null });
    expect(job!.judgeTraceId).toMatch(/^[0-9a-f]{32}$/);
    const [score] = await scoresOf(traceId!, who);
    expect(score).toMatchObject({ evalTraceId: job!.judgeTraceId });
    expect(score!.metadata).toMatchObject({ evaluatorId: ev.id, jobId: score!.id });

    const judged = await call('GET', `/api/traces/${job!.judgeTraceId}`, undefined, who);
    expect(judged.statusCode).toBe(200);
    const detail = judged.json().data;
    expect(detail).toMatchObject({ source: 'evaluator', name: ev.name, inputTokens: 120, outputTokens: 30 });
    expect(detail.spans).toHaveLength(1);
    const [generation] = detail.spans;
    expect(generation).toMatchObject({
      kind: 'llm.chat',
      model: 'gpt-4o-mini',
      provider: 'openai',
      inputTokens: 120,
      outputTokens: 30,
      costSource: 'computed',
      status: 'ok',
      metadata: { evaluatorId: ev.id, jobId: score!.id, targetTraceId: traceId },
    });
    expect(generation.costUsd).toBeGreaterThan(0);
    expect(generation.input.messages[1].content).toContain('Question: What is 2 + 2?');
    expect(JSON.parse(generation.output.text)).toEqual({ value: 0.75, reasoning: 'close enough' });

    // The judge's trace is a finished trace of the workspace matching the filter, yet no job is made for it.
    await worker.scan();
    await worker.runOnce();
    const jobs = await jobsOf(ev.id, who);
    expect(jobs.map((j) => j.traceId)).toEqual([traceId]);
  });

  it('a job run again after its score was written (its worker gone before the end) corrects that score: one score, its first creation time', async () => {
    const who = await ctx.tenant();
    const name = uniqueId('again');
    const ev = await judge({ filters: { name } }, { who });
    const [traceId] = await newTraces(name, 1, 'What is 2 + 2?', who);
    const answer = fake.answer;
    try {
      fake.answer = { value: 0.5, reasoning: 'first' };
      await worker.scan();
      await worker.runOnce();
      const [first] = await scoresOf(traceId!, who);
      expect(first).toMatchObject({ value: 0.5 });
      // As a worker that stopped between the score and the job's end leaves it once its lease is over.
      await ctx.sql`update evaluator_jobs set status = 'pending', next_attempt_at = now(), finished_at = null where evaluator_id = ${ev.id}`;
      fake.answer = { value: 0.25, reasoning: 'second' };
      await worker.runOnce();
      const scores = await scoresOf(traceId!, who);
      expect(scores).toHaveLength(1);
      expect(scores[0]).toMatchObject({ id: first!.id, value: 0.25, createdAt: first!.createdAt });
      expect((await jobsOf(ev.id, who)).map((j) => [j.status, j.attempts])).toEqual([['succeeded', 2]]);
    } finally {
      fake.answer = answer;
    }
  });

  it('a failed judge call is traced too, with its error, and the job names it', async () => {
    const name = uniqueId('denied');
    const ev = await judge({ filters: { name } });
    await newTraces(name, 1);
    fake.failures.push(401);
    await worker.scan();
    await worker.runOnce();
    const [job] = await jobsOf(ev.id);
    expect(job).toMatchObject({ status: 'failed' });
    const detail = (await call('GET', `/api/traces/${job!.judgeTraceId}`)).json().data;
    expect(detail.spans[0]).toMatchObject({ status: 'error', statusMessage: expect.stringContaining('401') });
  });

  it('a span evaluator judges the spans its filters take, and scores them on the span', async () => {
    const environment = uniqueId('env');
    const now = Date.now();
    const at = (ms: number) => new Date(now + ms).toISOString();
    const root = span({ kind: 'agent', startTime: at(0), endTime: at(30), durationMs: 30, input: { text: 'hi' }, output: { text: 'bye' } });
    const llm = (promptName: string) =>
      span({
        parentSpanId: root.spanId,
        name: 'answer',
        kind: 'llm.chat',
        startTime: at(1),
        endTime: at(10),
        durationMs: 9,
        promptName,
        input: { messages: [{ role: 'user', content: `asked with ${promptName}` }] },
        output: { text: 'an answer' },
      });
    const taken = llm('qa');
    const other = llm('summary');
    const tool = span({ parentSpanId: root.spanId, kind: 'tool', startTime: at(11), endTime: at(12), durationMs: 1 });
    const t = trace({ environment, spans: [root, taken, other, tool] });
    expect((await post(ctx, tenant, [t])).json().data.accepted).toBe(1);
    const ev = await judge({ kind: 'spans', filters: { environment, spanKind: 'llm.chat', promptName: 'qa' } });
    // Made after the trace: only a backfill reaches it.
    expect(await worker.scan()).toBe(0);
    const backfilled = await call('POST', `/api/evaluators/${ev.id}/backfill`, { from: new Date(now - 60_000).toISOString() });
    expect(backfilled.json().data).toMatchObject({ queued: 1, existing: 0, truncated: false });
    await worker.runOnce();
    const jobs = await jobsOf(ev.id);
    expect(jobs).toEqual([expect.objectContaining({ traceId: t.traceId, spanId: taken.spanId, status: 'succeeded' })]);
    expect(requestsAsking('asked with qa')).toBe(1);
    expect(requestsAsking('asked with summary')).toBe(0);
    const scores = await scoresOf(t.traceId);
    expect(scores).toEqual([expect.objectContaining({ spanId: taken.spanId, id: jobs[0]!.scoreId })]);
  });

  it('experiment runs: every item of a run judged with the dataset item input and expected output; a run evaluated whole by runId', async () => {
    const dataset = await created('POST', '/api/datasets', { name: uniqueId('ds') });
    const items = await call('POST', `/api/datasets/${dataset.id}/items`, {
      items: [
        { id: 'france', input: { question: 'Capital of France?' }, expectedOutput: 'Paris' },
        { id: 'spain', input: { question: 'Capital of Spain?' }, expectedOutput: 'Madrid' },
      ],
    });
    expect(items.statusCode, items.body).toBeLessThan(300);
    const options = {
      variables: { question: 'input.question', expected: 'expectedOutput', answer: 'output' },
      humanPrompt: 'Q: {question}\nExpected: {expected}\nGot: {answer}',
    };
    const live = await judge({ kind: 'runs', filters: { datasetId: dataset.id } }, options);
    const run = await created('POST', `/api/datasets/${dataset.id}/runs`, { name: uniqueId('run') });
    const traceIds = await newTraces(uniqueId('task'), 2, 'task input');
    const recorded = await call('POST', `/api/datasets/${dataset.id}/runs/${run.id}/items`, {
      items: [
        { datasetItemId: 'france', traceId: traceIds[0], output: 'Paris!' },
        { datasetItemId: 'spain', traceId: traceIds[1] },
      ],
    });
    expect(recorded.statusCode, recorded.body).toBeLessThan(300);

    expect(await worker.scan()).toBe(2);
    await worker.runOnce();
    const jobs = await jobsOf(live.id);
    expect(jobs.map((j) => [j.datasetItemId, j.runId, j.status]).sort()).toEqual([
      ['france', run.id, 'succeeded'],
      ['spain', run.id, 'succeeded'],
    ]);
    expect(requestsAsking('Q: Capital of France?\\nExpected: Paris\\nGot: Paris!')).toBe(1);
    // The run recorded no output for this item: the trace's output stands.
    expect(requestsAsking('Q: Capital of Spain?\\nExpected: Madrid\\nGot: 4')).toBe(1);
    expect((await scoresOf(traceIds[0]!))[0]!.metadata).toMatchObject({ runId: run.id, datasetItemId: 'france' });

    // An evaluator made after the run reaches it whole by runId, once however often asked.
    const later = await judge({ kind: 'runs' }, options);
    expect(await worker.scan()).toBe(0);
    const first = await call('POST', `/api/evaluators/${later.id}/backfill`, { runId: run.id });
    expect(first.json().data).toMatchObject({ queued: 2, existing: 0 });
    const again = await call('POST', `/api/evaluators/${later.id}/backfill`, { runId: run.id });
    expect(again.json().data).toMatchObject({ queued: 0, existing: 2 });
    await worker.runOnce();
    expect((await jobsOf(later.id)).map((j) => j.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('a backfill is bounded by maxJobs, resumable, and never queues a target twice', async () => {
    const name = uniqueId('past');
    const from = new Date(Date.now() - 60_000).toISOString();
    const traceIds = await newTraces(name, 3);
    const ev = await judge({ filters: { name } });
    expect(await worker.scan()).toBe(0);
    const capped = await call('POST', `/api/evaluators/${ev.id}/backfill`, { from, maxJobs: 2 });
    expect(capped.statusCode).toBe(200);
    expect(capped.json().data).toMatchObject({ queued: 2, skipped: 0, truncated: true, resumeFrom: from });
    const rest = await call('POST', `/api/evaluators/${ev.id}/backfill`, { from: capped.json().data.resumeFrom, maxJobs: 10 });
    expect(rest.json().data).toMatchObject({ queued: 1, existing: 2, truncated: false });
    await worker.runOnce();
    expect((await jobsOf(ev.id)).map((j) => j.traceId).sort()).toEqual([...traceIds].sort());

    const bad = await call('POST', `/api/evaluators/${ev.id}/backfill`, { maxJobs: 5 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('from');
    const notRuns = await call('POST', `/api/evaluators/${ev.id}/backfill`, { runId: ev.id });
    expect(notRuns.statusCode).toBe(400);
    expect(notRuns.json().error.message).toContain('runId');
    const backwards = await call('POST', `/api/evaluators/${ev.id}/backfill`, {
      from,
      to: new Date(Date.parse(from) - 1000).toISOString(),
    });
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().error.message).toContain('to');
  });

  it('a trace still running holds up no trace after it, and is judged once it ends', async () => {
    const name = uniqueId('long');
    const ev = await judge({ filters: { name } });
    const now = Date.now();
    // No root span yet: the trace runs.
    const child = span({
      parentSpanId: 'root',
      startTime: new Date(now).toISOString(),
      endTime: new Date(now + 1).toISOString(),
      durationMs: 1,
    });
    const running = trace({ name, spans: [child] });
    expect((await post(ctx, tenant, [running])).json().data.accepted).toBe(1);
    await ctx.writer.settled();
    // More finished traces after it than one page of a scan holds.
    const after = [];
    for (let i = 0; i < 3; i += 1) after.push(...(await newTraces(name, 50)));
    expect(await worker.scan()).toBe(150);
    expect(await worker.scan()).toBe(0);
    await sendRoot(running, child, now, 10);
    expect(await worker.scan()).toBe(1);
    const jobs = await jobsOf(ev.id);
    expect(new Set(jobs.map((j) => j.traceId))).toEqual(new Set([running.traceId, ...after]));
    // Its 151 jobs are left unrun: paused, they are not claimed by the workers of the tests after it.
    expect((await call('POST', `/api/evaluators/${ev.id}/pause`)).statusCode).toBe(200);
  });

  it("a connection's requests per minute hold across service instances: two workers, each with a limiter of its own, one budget", async () => {
    let clock = Date.now();
    // Two instances' limiters: each its own, over the same PostgreSQL.
    const first = evaluatorWorkerFor(ctx, {
      retry: noRetryWait,
      limiter: createConnectionRateLimiter(ctx.sql, () => clock),
      concurrency: 3,
    });
    const second = evaluatorWorkerFor(ctx, {
      retry: noRetryWait,
      limiter: createConnectionRateLimiter(ctx.sql, () => clock),
      concurrency: 3,
    });
    const conn = await connection(tenant, { requestsPerMinute: 2 });
    expect((await call('GET', `/api/model-connections/${conn.id}`)).json().data.requestsPerMinute).toBe(2);
    const name = uniqueId('limited');
    const marker = uniqueId('limited-question');
    const ev = await judge({ filters: { name } }, { connectionId: conn.id });
    await newTraces(name, 5, marker);
    await first.scan();
    await Promise.all([first.runOnce(), second.runOnce()]);
    expect(requestsAsking(marker)).toBe(2);
    let jobs = await jobsOf(ev.id);
    expect(jobs.filter((j) => j.status === 'succeeded')).toHaveLength(2);
    // Put back for later, no attempt counted.
    expect(jobs.filter((j) => j.status === 'pending').map((j) => j.attempts)).toEqual([0, 0, 0]);

    // A minute on, the budget is whole again; the deferred jobs are made due now.
    clock += 61_000;
    await ctx.sql`update evaluator_jobs set next_attempt_at = now() where evaluator_id = ${ev.id} and status = 'pending'`;
    await Promise.all([first.runOnce(), second.runOnce()]);
    expect(requestsAsking(marker)).toBe(4);
    clock += 61_000;
    await ctx.sql`update evaluator_jobs set next_attempt_at = now() where evaluator_id = ${ev.id} and status = 'pending'`;
    await Promise.all([first.runOnce(), second.runOnce()]);
    jobs = await jobsOf(ev.id);
    expect(jobs.map((j) => j.status)).toEqual(Array(5).fill('succeeded'));
    expect(requestsAsking(marker)).toBe(5);
  });

  it('a worker runs at most its share of lanes for one workspace; jobs claimed together keep to it', async () => {
    const other = await ctx.tenant();
    const keyOf = (who: Tenant) => `sk-lanes-${who === tenant ? 'first' : 'second'}-${uniqueId('k')}`;
    const keys = new Map([tenant, other].map((who) => [who, keyOf(who)]));
    const name = uniqueId('lanes');
    const evaluators = [];
    // The first workspace's jobs are the oldest: a claim that ignored the share would take them all.
    for (const [who, count] of [
      [tenant, 8],
      [other, 3],
    ] as const) {
      const conn = await connection(who, { apiKey: keys.get(who) });
      const ev = await judge({ filters: { name } }, { who, connectionId: conn.id });
      evaluators.push({ who, ev, count });
      await newTraces(name, count, 'lanes', who);
    }
    const lanes = evaluatorWorkerFor(ctx, { retry: noRetryWait, concurrency: 4, perWorkspaceConcurrency: 2 });
    await lanes.scan();
    fake.delayMs = 30;
    try {
      await lanes.runOnce();
    } finally {
      fake.delayMs = 0;
    }
    for (const key of keys.values()) expect(fake.busiest.get(`Bearer ${key}`)).toBeLessThanOrEqual(2);
    for (const { who, ev, count } of evaluators) {
      const jobs = await jobsOf(ev.id, who);
      expect(jobs.map((j) => j.status)).toEqual(Array(count).fill('succeeded'));
    }
  });

  it("a preview counts against the worker's requests per minute: one budget", async () => {
    // The worker as the service makes it: over the app's ingest, limiter and ingest measure.
    const shared = evaluatorWorkerFor({ ...ctx, ingest: ctx.app.traceIngest, shared: ctx.app.evaluation }, { retry: noRetryWait });
    const conn = await connection(tenant, { requestsPerMinute: 2 });
    const name = uniqueId('previewed');
    const marker = uniqueId('previewed-question');
    const ev = await judge({ filters: { name } }, { connectionId: conn.id });
    const definition = (await call('GET', `/api/evaluators/${ev.id}`)).json().data as Record<string, unknown>;
    const [traceId] = await newTraces(name, 2, marker);
    const preview = () =>
      call('POST', '/api/evaluators/preview', {
        name: 'preview',
        type: 'llm_judge',
        judge: definition.judge,
        score: definition.score,
        traceId,
      });
    expect((await preview()).statusCode).toBe(200);
    expect(await shared.scan()).toBe(2);
    await shared.runOnce();
    // The preview took one of the minute's two calls: one job ran, the other waits, no attempt counted.
    expect(requestsAsking(marker)).toBe(2);
    const jobs = await jobsOf(ev.id);
    expect(jobs.map((j) => j.status).sort()).toEqual(['pending', 'succeeded']);
    expect(jobs.find((j) => j.status === 'pending')!.attempts).toBe(0);
    // And the worker's call counts against the preview.
    const limited = await preview();
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(requestsAsking(marker)).toBe(2);
  });

  it('while external ingest is busy the worker yields to it, its jobs still complete, and no target is lost', async () => {
    const name = uniqueId('beside-ingest');
    const ev = await judge({ filters: { name } });
    const worker = evaluatorWorkerFor(
      { ...ctx, ingest: ctx.app.traceIngest, shared: ctx.app.evaluation },
      { retry: noRetryWait, pollIntervalMs: 50, yieldTo: { busyAt: 1, share: 0.2, burst: 4, maxRestMs: 300, busyScanPages: 1 } },
    );
    const sent: string[] = [];
    let ingesting = true;
    let ingestEnded = false;
    // Clients send traces the evaluator takes, a request every few milliseconds (at most 480
    // traces: one page of the jobs list), while the worker runs.
    const ingest = (async () => {
      while (ingesting && sent.length < 480) {
        const batch = finishedTraces(name, 3);
        expect((await post(ctx, tenant, batch)).json().data.accepted).toBe(3);
        sent.push(...batch.map((t) => t.traceId));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      ingestEnded = true;
    })();
    const succeeded = async () => (await jobsOf(ev.id)).filter((j) => j.status === 'succeeded').length;
    try {
      await until(async () => ctx.app.evaluation.ingestActivity.recentRequests() >= 1);
      worker.start();
      // Judged while ingest goes on.
      await until(async () => (await succeeded()) >= 10);
      expect(ingestEnded).toBe(false);
      expect(ctx.app.evaluation.ingestActivity.recentRequests()).toBeGreaterThanOrEqual(1);
    } finally {
      ingesting = false;
      await ingest;
    }
    // Ingest over: the worker runs at full speed and catches up; every trace sent is judged once.
    await ctx.writer.settled();
    await until(async () => (await succeeded()) === sent.length, 120_000);
    await worker.stop();
    const jobs = await jobsOf(ev.id);
    expect(jobs.map((j) => j.traceId).sort()).toEqual([...sent].sort());
    expect(jobs.every((j) => j.status === 'succeeded' && j.attempts === 1)).toBe(true);
  });

  it('a service stopped mid-way and started again: every target scored once for the evaluator version', async () => {
    const name = uniqueId('restart');
    const marker = uniqueId('restart-question');
    const ev = await judge({ filters: { name } });
    const traceIds = await newTraces(name, 8, marker);
    expect(await worker.scan()).toBe(8);
    fake.delayMs = 300;
    // The first instance, on connections of its own: it dies (its connections cut) with jobs in
    // flight, whose leases then end.
    const dying = connectPostgres(ctx.postgresUrl);
    const first = evaluatorWorkerFor({ ...ctx, sql: dying }, { retry: noRetryWait, concurrency: 3, pollIntervalMs: 50, leaseMs: 1500 });
    first.start();
    await until(async () => requestsAsking(marker) >= 4);
    await dying.end({ timeout: 0 });
    await first.stop();
    const done = (await jobsOf(ev.id)).filter((j) => j.status === 'succeeded').length;
    expect(done).toBeLessThan(8);

    // Started again: a new instance finishes the queue.
    const restarted = connectPostgres(ctx.postgresUrl);
    const second = evaluatorWorkerFor({ ...ctx, sql: restarted }, { retry: noRetryWait, concurrency: 3, pollIntervalMs: 50 });
    try {
      second.start();
      await until(async () => (await jobsOf(ev.id)).every((j) => j.status === 'succeeded'));
    } finally {
      await second.stop();
      await restarted.end({ timeout: 5 });
      fake.delayMs = 0;
    }
    const jobs = await jobsOf(ev.id);
    expect(jobs).toHaveLength(8);
    // The calls in flight when the first instance died were made again (their jobs were not done)...
    expect(requestsAsking(marker)).toBeGreaterThan(8);
    // ...yet each target has one score: the job's, corrected rather than doubled.
    for (const traceId of traceIds) {
      const scores = await scoresOf(traceId);
      const job = jobs.find((j) => j.traceId === traceId)!;
      expect(scores.map((s) => s.id)).toEqual([job.scoreId]);
    }
  });

  it('a waiting trace whose root arrives later with an earlier start is still judged', async () => {
    const name = uniqueId('late-root');
    const ev = await judge({ filters: { name } });
    const now = Date.now();
    const child = span({
      parentSpanId: 'root',
      startTime: new Date(now + 50).toISOString(),
      endTime: new Date(now + 60).toISOString(),
      durationMs: 10,
    });
    const running = trace({ name, spans: [child] });
    expect((await post(ctx, tenant, [running])).json().data.accepted).toBe(1);
    await ctx.writer.settled();
    expect(await worker.scan()).toBe(0);
    await sendRoot(running, child, now, 100);
    expect(await worker.scan()).toBe(1);
    expect((await jobsOf(ev.id)).map((j) => j.traceId)).toEqual([running.traceId]);
  });

  it('a trace sent after a later-started one was scanned is still judged', async () => {
    const name = uniqueId('out-of-order');
    const ev = await judge({ filters: { name } });
    const now = Date.now();
    const at = (start: number) =>
      trace({
        name,
        spans: [
          span({ kind: 'agent', startTime: new Date(start).toISOString(), endTime: new Date(start + 5).toISOString(), durationMs: 5 }),
        ],
      });
    const later = at(now + 100);
    const earlier = at(now);
    expect((await post(ctx, tenant, [later])).json().data.accepted).toBe(1);
    await ctx.writer.settled();
    // Judged once ended (the delay is 0): the scan runs after the later trace's end.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, now + 110 - Date.now())));
    expect(await worker.scan()).toBe(1);
    expect((await post(ctx, tenant, [earlier])).json().data.accepted).toBe(1);
    await ctx.writer.settled();
    expect(await worker.scan()).toBe(1);
    expect((await jobsOf(ev.id)).length).toBe(2);
  });

  it('a summary readable after a higher version was scanned is still judged: the mark stays behind the clock', async () => {
    const name = uniqueId('late-write');
    const ev = await judge({ filters: { name } });
    const [first] = await newTraces(name, 1);
    expect(await worker.scan()).toBe(1);
    // Stored now under a version taken 5 s ago (another process's flush, a write replayed after a
    // crash): below the version of the trace already scanned.
    const start = new Date(Date.now() - 100).toISOString().replace('T', ' ').replace('Z', '');
    await ctx.writeClient.insert({
      table: 'traces',
      values: [
        {
          workspace_id: tenant.workspaceId,
          trace_id: uniqueId('late-trace'),
          name,
          source: 'sdk',
          status: 'completed',
          start_time: start,
          end_time: start,
          span_count: 1,
          error_count: 0,
          version: (BigInt(Date.now() - 5_000) * 1_000_000n).toString(),
        },
      ],
      format: 'JSONEachRow',
    });
    const [mark] = await ctx.sql<{ v: string }[]>`select scanned_version::text as v from evaluators where id = ${ev.id}`;
    expect(BigInt(mark!.v)).toBeLessThanOrEqual(BigInt(Date.now() - 30_000) * 1_000_000n);
    expect(await worker.scan()).toBe(1);
    expect((await jobsOf(ev.id)).map((j) => j.traceId)).toContain(first);
    expect(await jobsOf(ev.id)).toHaveLength(2);
  });

  it("a walk that finds nothing its filter takes still moves the mark up to the lookback, and judges' own traces are not read as changes", async () => {
    const ev = await judge({ filters: { name: uniqueId('never-sent') } });
    await newTraces(uniqueId('other-name'), 3);
    const markOf = async () =>
      BigInt((await ctx.sql<{ v: string }[]>`select scanned_version::text as v from evaluators where id = ${ev.id}`)[0]!.v);
    const before = await markOf();
    const scannedAt = Date.now();
    expect(await worker.scan()).toBe(0);
    const after = await markOf();
    // Before this, the mark stayed where it was while nothing matched: each round read every change since.
    expect(after).toBeGreaterThan(before);
    expect(after).toBeGreaterThanOrEqual(BigInt(scannedAt - 30_000) * 1_000_000n);
    expect(after).toBeLessThanOrEqual(BigInt(Date.now() - 30_000) * 1_000_000n);
    expect(await jobsOf(ev.id)).toHaveLength(0);
  });

  it('two service instances share the queue: each target judged once', async () => {
    const name = uniqueId('pair');
    const marker = uniqueId('pair-question');
    const ev = await judge({ filters: { name } });
    const traceIds = await newTraces(name, 24, marker);
    fake.delayMs = 20;
    const instances = [connectPostgres(ctx.postgresUrl), connectPostgres(ctx.postgresUrl)];
    const writer = new WriteBatcher(ctx.writeClient);
    const workers = instances.map((sql, i) =>
      evaluatorWorkerFor(
        { ...ctx, sql, writer: i === 0 ? ctx.writer : writer },
        { retry: noRetryWait, concurrency: 4, pollIntervalMs: 50 },
      ),
    );
    try {
      // Both scan and work at once.
      for (const w of workers) w.start();
      await until(async () => {
        const jobs = await jobsOf(ev.id);
        return jobs.length === 24 && jobs.every((j) => j.status === 'succeeded');
      });
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(instances.map((sql) => sql.end({ timeout: 5 })));
      await writer.close();
      fake.delayMs = 0;
    }
    expect(requestsAsking(marker)).toBe(24);
    for (const traceId of traceIds) expect(await scoresOf(traceId)).toHaveLength(1);
  });
});
