import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatorWorkerFor, secretLogPaths } from '../../src/app.js';
import type { EvaluatorWorker } from '../../src/evaluators/service/worker.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, trace, span, uniqueId } from './traces-fixtures.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-model-provider.js';

const API_KEY = 'sk-test-VERY-SECRET-key-9f3a';
const ENCRYPTION_KEY = 'ab'.repeat(32);

describe('evaluators', () => {
  let ctx: TestContext;
  let tenant: Tenant;
  let fake: FakeProvider;
  const logLines: string[] = [];
  let worker: EvaluatorWorker;
  const noRetryWait = { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 };

  beforeAll(async () => {
    fake = await startFakeProvider();
    const log = pino(
      { level: 'trace', redact: secretLogPaths },
      new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) }),
    );
    ctx = await createTestContext({
      env: { LOUPE_ENCRYPTION_KEY: ENCRYPTION_KEY, LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true' },
      ingestAck: 'store',
      deps: { log },
    });
    tenant = await ctx.tenant();
    worker = evaluatorWorkerFor(ctx, { log, retry: noRetryWait });
  });
  afterAll(async () => {
    await ctx?.close();
    await fake?.close();
  });

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object, who: Tenant = tenant) =>
    ctx.app.inject({ method, url, headers: who.headers, ...(payload && { payload }) });

  async function connection(who: Tenant = tenant) {
    const res = await call(
      'POST',
      '/api/model-connections',
      { name: uniqueId('conn'), provider: 'openai', baseUrl: fake.url, apiKey: API_KEY, defaultModel: 'judge-1' },
      who,
    );
    expect(res.statusCode).toBe(201);
    return res.json().data as { id: string };
  }

  async function judgePrompt() {
    const name = uniqueId('judge');
    const res = await call('POST', '/api/prompt', {
      name,
      systemPrompt: 'You grade answers.',
      humanPrompt: 'Question: {question}\nAnswer: {answer}\nScore 0..1.',
    });
    expect(res.statusCode).toBe(201);
    return name;
  }

  /** A finished trace that started now (after the evaluator was made), named `name`. */
  async function newTrace(name: string) {
    const now = Date.now();
    const t = trace({
      name,
      spans: [
        span({
          kind: 'agent',
          startTime: new Date(now).toISOString(),
          endTime: new Date(now + 5).toISOString(),
          durationMs: 5,
          input: { text: 'What is 2 + 2?' },
          output: { text: '4' },
        }),
      ],
    });
    const res = await post(ctx, tenant, [t]);
    expect(res.json().data.accepted).toBe(1);
    // Answered once logged; the scan reads the store: the write is applied first.
    await ctx.writer.settled();
    return t.traceId;
  }

  async function judge(traceName: string) {
    const conn = await connection();
    const res = await call('POST', '/api/evaluators', {
      name: uniqueId('ev'),
      type: 'llm_judge',
      judge: { connectionId: conn.id, prompt: { name: await judgePrompt() }, variables: { question: 'input', answer: 'output' } },
      score: { name: 'correctness', dataType: 'numeric' },
      target: { filters: { name: traceName }, delaySeconds: 0 },
    });
    expect(res.statusCode).toBe(201);
    return res.json().data as { id: string };
  }

  const jobsOf = async (evaluatorId: string) =>
    (await call('GET', `/api/evaluators/${evaluatorId}/jobs`)).json().data as Record<string, unknown>[];

  it('a judge scores a new trace once, and not again on a second run or by a second worker', async () => {
    const name = uniqueId('judged');
    const ev = await judge(name);
    const traceId = await newTrace(name);
    await newTrace(uniqueId('other')); // filtered out by name
    fake.answer = { value: 0.9, reasoning: 'it is right' };
    const before = fake.requests.length;

    expect(await worker.scan()).toBe(1);
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    const second = evaluatorWorkerFor(ctx, { retry: noRetryWait });
    expect(await second.scan()).toBe(0);
    // Found again (two workers scanning at once, a scan start lost): the job's key keeps it queued once.
    await ctx.sql`update evaluators set scanned_version = scanned_version - 3600000000000 where id = ${ev.id}`;
    expect(await second.scan()).toBe(0);
    await Promise.all([worker.runOnce(), second.runOnce()]);
    expect(fake.requests.length - before).toBe(1);

    const request = fake.requests.at(-1)!;
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.body.model).toBe('judge-1');
    expect((request.body.response_format as { type: string }).type).toBe('json_schema');
    expect(JSON.stringify(request.body.messages)).toContain('Question: What is 2 + 2?\\nAnswer: 4');

    const jobs = await jobsOf(ev.id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ traceId, status: 'succeeded', attempts: 1, error: null });
    const scores = (await call('GET', `/api/scores?traceId=${traceId}`)).json().data as Record<string, unknown>[];
    expect(scores).toHaveLength(1);
    expect(scores[0]).toMatchObject({ id: jobs[0]!.scoreId, name: 'correctness', value: 0.9, comment: 'it is right', source: 'eval' });
  });

  it('a malformed answer is a failed job, never retried', async () => {
    const name = uniqueId('malformed');
    const ev = await judge(name);
    await newTrace(name);
    fake.answer = 'I think it is fine';
    await worker.scan();
    await worker.runOnce();
    const [job] = await jobsOf(ev.id);
    expect(job).toMatchObject({ status: 'failed', attempts: 1, scoreId: null });
    expect(job!.error).toMatch(/not JSON/);
    fake.answer = { value: 'high', reasoning: 'x' };
    const name2 = uniqueId('malformed');
    const ev2 = await judge(name2);
    await newTrace(name2);
    await worker.scan();
    await worker.runOnce();
    expect((await jobsOf(ev2.id))[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/malformed: value/) });
  });

  it('retries 429 and 500, then scores; the key is in no job, answer or log line', async () => {
    const name = uniqueId('retried');
    const ev = await judge(name);
    await newTrace(name);
    fake.answer = { value: 0.5, reasoning: 'half' };
    fake.failures.push(429, 500);
    await worker.scan();
    const before = fake.requests.length;
    // The policy waits 0 ms, so one round retries until the job is done.
    await worker.runOnce();
    expect(fake.requests.length - before).toBe(3);
    expect((await jobsOf(ev.id))[0]).toMatchObject({ status: 'succeeded', attempts: 3, error: null });

    // A permanent failure keeps the provider's words, with the key the provider echoed struck out.
    const name2 = uniqueId('echoed');
    const ev2 = await judge(name2);
    await newTrace(name2);
    fake.failures.push(401);
    await worker.scan();
    await worker.runOnce();
    const [failed] = await jobsOf(ev2.id);
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('[redacted]') });
    expect(JSON.stringify(failed)).not.toContain(API_KEY);

    const conns = await call('GET', '/api/model-connections');
    expect(conns.body).not.toContain(API_KEY);
    expect(conns.json().data[0].apiKeyTail).toBe(API_KEY.slice(-4));
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(API_KEY);
    const [stored] = await ctx.sql<{ sealed: string }[]>`select api_key_sealed as sealed from model_connections limit 1`;
    expect(stored!.sealed).not.toContain(API_KEY);
  });

  it('a 4xx other than 429 fails at once; attempts stop at the policy', async () => {
    const name = uniqueId('denied');
    const ev = await judge(name);
    await newTrace(name);
    fake.failures.push(401);
    await worker.scan();
    await worker.runOnce();
    expect((await jobsOf(ev.id))[0]).toMatchObject({ status: 'failed', attempts: 1 });

    const name2 = uniqueId('down');
    const ev2 = await judge(name2);
    await newTrace(name2);
    fake.failures.push(503, 503, 503);
    await worker.scan();
    for (let i = 0; i < 4; i += 1) await worker.runOnce();
    expect((await jobsOf(ev2.id))[0]).toMatchObject({ status: 'failed', attempts: 3 });
    fake.failures.length = 0;
  });

  it('test connection reports the answer or the provider error', async () => {
    const conn = await connection();
    fake.answer = 'OK';
    const ok = await call('POST', `/api/model-connections/${conn.id}/test`);
    expect(ok.json().data).toMatchObject({ ok: true, answer: 'OK' });
    fake.failures.push(500);
    const failed = await call('POST', `/api/model-connections/${conn.id}/test`);
    expect(failed.json().data).toMatchObject({ ok: false, statusCode: 500 });
    expect(failed.body).not.toContain(API_KEY);
  });

  it('a paused evaluator does not run; resumed it does', async () => {
    const name = uniqueId('paused');
    const ev = await judge(name);
    expect((await call('POST', `/api/evaluators/${ev.id}/pause`)).json().data.status).toBe('paused');
    await newTrace(name);
    await worker.scan();
    await worker.runOnce();
    expect(await jobsOf(ev.id)).toHaveLength(0);
    await call('POST', `/api/evaluators/${ev.id}/resume`);
    fake.answer = { value: 1, reasoning: 'fine' };
    await worker.scan();
    await worker.runOnce();
    expect((await jobsOf(ev.id))[0]).toMatchObject({ status: 'succeeded' });
  });

  it('a check needs no model: a built-in check scores the trace', async () => {
    const name = uniqueId('checked');
    const res = await call('POST', '/api/evaluators', {
      name: uniqueId('ev'),
      type: 'check',
      check: { type: 'contains', text: '4' },
      score: { name: 'has-four', dataType: 'boolean' },
      target: { filters: { name }, delaySeconds: 0 },
    });
    expect(res.statusCode).toBe(201);
    const traceId = await newTrace(name);
    await worker.scan();
    await worker.runOnce();
    const scores = (await call('GET', `/api/scores?traceId=${traceId}`)).json().data as Record<string, unknown>[];
    expect(scores[0]).toMatchObject({ name: 'has-four', value: 1, source: 'eval' });
  });

  it('bad input, unknown references and another workspace', async () => {
    const bad = await call('POST', '/api/evaluators', { name: 'x', type: 'llm_judge', score: { name: 's', dataType: 'numeric' } });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json().error)).toContain('judge');
    const other = await ctx.tenant();
    const conn = await connection(other);
    const foreign = await call('POST', '/api/evaluators', {
      name: 'y',
      type: 'llm_judge',
      judge: { connectionId: conn.id, prompt: { name: await judgePrompt() } },
      score: { name: 's', dataType: 'numeric' },
    });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error.message).toContain('judge.connectionId');
    expect((await call('GET', `/api/model-connections/${conn.id}`)).statusCode).toBe(404);
  });
});

describe('model connections without the encryption key, and the private-address guard', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({});
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('creating a connection names LOUPE_ENCRYPTION_KEY', async () => {
    const tenant = await ctx.tenant();
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/model-connections',
      headers: tenant.headers,
      payload: { name: 'c', provider: 'openai', baseUrl: 'https://api.example.com/v1', apiKey: API_KEY, defaultModel: 'm' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toContain('LOUPE_ENCRYPTION_KEY');
    expect(res.body).not.toContain(API_KEY);
  });

  it('a private base URL is refused unless allowed', async () => {
    const guarded = await createTestContext({ env: { LOUPE_ENCRYPTION_KEY: ENCRYPTION_KEY } });
    try {
      const tenant = await guarded.tenant();
      for (const baseUrl of ['http://127.0.0.1:1/v1', 'http://169.254.169.254/v1', 'http://localhost/v1', 'http://10.0.0.5/v1']) {
        const res = await guarded.app.inject({
          method: 'POST',
          url: '/api/model-connections',
          headers: tenant.headers,
          payload: { name: uniqueId('c'), provider: 'openai', baseUrl, apiKey: API_KEY, defaultModel: 'm' },
        });
        expect(res.statusCode, baseUrl).toBe(400);
        expect(res.json().error.message).toContain('LOUPE_WEBHOOK_ALLOW_PRIVATE');
      }
      const ok = await guarded.app.inject({
        method: 'POST',
        url: '/api/model-connections',
        headers: tenant.headers,
        payload: {
          name: uniqueId('c'),
          provider: 'anthropic',
          baseUrl: 'https://api.anthropic.com/v1',
          apiKey: API_KEY,
          defaultModel: 'm',
        },
      });
      expect(ok.statusCode).toBe(201);
      expect(ok.body).not.toContain(API_KEY);
    } finally {
      await guarded.close();
    }
  });
});
