import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatorWorkerFor } from '../../src/app.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-model-provider.js';
import { post, trace, span, uniqueId } from './traces-fixtures.js';

const API_KEY = 'sk-test-preview-key-77c1';

/** `POST /api/evaluators/preview` against a local fake OpenAI-compatible server. */
describe('evaluator preview', () => {
  let ctx: TestContext;
  let tenant: Tenant;
  let other: Tenant;
  let fake: FakeProvider;
  let connectionId: string;
  let judgePrompt: string;
  let traceId: string;
  let childSpanId: string;

  const call = (url: string, payload: object, who: Tenant = tenant) =>
    ctx.app.inject({ method: 'POST', url, headers: who.headers, payload });

  beforeAll(async () => {
    fake = await startFakeProvider();
    ctx = await createTestContext({
      env: { LOUPE_ENCRYPTION_KEY: 'cd'.repeat(32), LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true' },
      ingestAck: 'store',
    });
    tenant = await ctx.tenant();
    other = await ctx.tenant();
    const conn = await call('/api/model-connections', {
      name: 'judge',
      provider: 'openai',
      baseUrl: fake.url,
      apiKey: API_KEY,
      defaultModel: 'judge-1',
    });
    expect(conn.statusCode).toBe(201);
    connectionId = conn.json().data.id;
    judgePrompt = uniqueId('judge');
    const prompt = await call('/api/prompt', {
      name: judgePrompt,
      systemPrompt: 'You grade answers.',
      humanPrompt: 'Question: {question}\nAnswer: {answer}',
    });
    expect(prompt.statusCode).toBe(201);
    const root = span({ kind: 'agent', input: { text: 'What is 2 + 2?' }, output: { text: '4' } });
    childSpanId = uniqueId('s');
    const child = span({ spanId: childSpanId, parentSpanId: root.spanId, output: { text: '{"ok": true}' } });
    const t = trace({ spans: [root, child] });
    traceId = t.traceId;
    expect((await post(ctx, tenant, [t])).json().data.accepted).toBe(1);
  });
  afterAll(async () => {
    await ctx?.close();
    await fake?.close();
  });

  const judge = (variables: Record<string, string> = { question: 'input', answer: 'output' }) => ({
    name: 'correctness',
    type: 'llm_judge',
    judge: { connectionId, prompt: { name: judgePrompt }, variables },
    score: { name: 'correctness', dataType: 'numeric' },
  });
  const jobsAndScores = async () => ({
    scores: (await ctx.app.inject({ method: 'GET', url: `/api/scores?traceId=${traceId}`, headers: tenant.headers })).json().data,
    evaluators: (await ctx.app.inject({ method: 'GET', url: '/api/evaluators', headers: tenant.headers })).json().data,
  });

  it('judges the trace once and answers the score, storing nothing', async () => {
    fake.answer = { value: 0.75, reasoning: 'close enough' };
    const before = fake.requests.length;
    const res = await call('/api/evaluators/preview', { ...judge(), traceId });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ name: 'correctness', dataType: 'numeric', value: 0.75, stringValue: null, comment: 'close enough' });
    expect(fake.requests.length - before).toBe(1);
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('Question: What is 2 + 2?\\nAnswer: 4');
    expect(await jobsAndScores()).toEqual({ scores: [], evaluators: [] });
  });

  it('runs a built-in check on a chosen span', async () => {
    const check = {
      name: 'ok',
      type: 'check',
      check: { type: 'contains', text: '"ok"' },
      score: { name: 'says_ok', dataType: 'boolean' },
      traceId,
    };
    const onSpan = await call('/api/evaluators/preview', { ...check, spanId: childSpanId });
    expect(onSpan.json().data).toMatchObject({ name: 'says_ok', value: 1, stringValue: 'true' });
    const onRoot = await call('/api/evaluators/preview', check);
    expect(onRoot.json().data).toMatchObject({ value: 0, stringValue: 'false' });
    const noSpan = await call('/api/evaluators/preview', { ...check, spanId: 'no-such-span' });
    expect(noSpan.statusCode).toBe(404);
  });

  it('answers the provider error, a malformed answer and a missing variable in the error envelope', async () => {
    fake.failures.push(401);
    const denied = await call('/api/evaluators/preview', { ...judge(), traceId });
    expect(denied.statusCode).toBe(502);
    expect(denied.json().error).toMatchObject({ code: 'MODEL_ERROR', details: { transient: false } });
    expect(denied.json().error.message).toContain('401');
    expect(denied.body).not.toContain(API_KEY);

    fake.answer = 'looks fine to me';
    const malformed = await call('/api/evaluators/preview', { ...judge(), traceId });
    expect(malformed.statusCode).toBe(502);
    expect(malformed.json().error.message).toMatch(/not JSON/);

    const before = fake.requests.length;
    const unmapped = await call('/api/evaluators/preview', { ...judge({ question: 'input' }), traceId });
    expect(unmapped.statusCode).toBe(400);
    expect(unmapped.json().error.details.issues).toEqual([
      { path: 'judge.variables.answer', message: 'is a variable of the judge prompt that maps no field' },
    ]);
    const absent = await call('/api/evaluators/preview', { ...judge({ question: 'input', answer: 'metadata.reply' }), traceId });
    expect(absent.statusCode).toBe(400);
    expect(absent.json().error.details.issues[0].path).toBe('judge.variables.answer');
    expect(fake.requests.length).toBe(before);

    const bad = await call('/api/evaluators/preview', { ...judge(), traceId: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('body.traceId');
  });

  it("applies the score config's bounds and type as the worker's store does: the same refusal, the same value", async () => {
    const scoreName = uniqueId('bounded');
    const config = await call('/api/score-configs', { name: scoreName, dataType: 'numeric', min: 0, max: 1 });
    expect(config.statusCode, config.body).toBe(201);
    const categorical = uniqueId('graded');
    expect(
      (await call('/api/score-configs', { name: categorical, dataType: 'categorical', categories: [{ label: 'good', value: 1 }] }))
        .statusCode,
    ).toBe(201);
    const bounded = (name: string) => ({ ...judge(), score: { name, dataType: 'numeric' } });

    // The preview's refusals.
    fake.answer = { value: 5, reasoning: 'too generous' };
    const over = await call('/api/evaluators/preview', { ...bounded(scoreName), traceId });
    expect(over.statusCode).toBe(400);
    expect(over.json().error).toMatchObject({ code: 'VALIDATION_ERROR' });
    const overReason = over.json().error.details.issues[0] as { path: string; message: string };
    expect(overReason).toEqual({ path: 'score', message: 'the score would be refused: value must be at most 1 (config)' });
    fake.answer = { value: 0.5, reasoning: 'half right' };
    const wrongType = await call('/api/evaluators/preview', { ...bounded(categorical), traceId });
    expect(wrongType.statusCode).toBe(400);
    const typeReason = wrongType.json().error.details.issues[0].message as string;
    expect(typeReason).toContain('says categorical, not numeric');
    const within = await call('/api/evaluators/preview', { ...bounded(scoreName), traceId });
    expect(within.statusCode).toBe(200);
    expect(within.json().data).toMatchObject({ name: scoreName, value: 0.5, stringValue: null });

    // The worker on the same trace and answers: its jobs fail with the same reasons, or store the same value.
    const worker = evaluatorWorkerFor(ctx, { retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } });
    const jobOf = async (name: string, answer: unknown) => {
      const created = await call('/api/evaluators', { ...bounded(name), name: uniqueId('ev') });
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().data.id as string;
      // The trace started in 2025 (traces-fixtures.ts).
      const backfill = await call(`/api/evaluators/${id}/backfill`, {
        from: '2025-01-01T00:00:00.000Z',
        to: '2025-01-02T00:00:00.000Z',
        maxJobs: 1000,
      });
      expect(backfill.statusCode, backfill.body).toBe(200);
      expect(backfill.json().data.queued).toBe(1);
      fake.answer = answer;
      await worker.runOnce();
      const jobs = (await ctx.app.inject({ method: 'GET', url: `/api/evaluators/${id}/jobs`, headers: tenant.headers })).json().data as {
        traceId: string;
        status: string;
        error: string | null;
        scoreId: string | null;
      }[];
      return jobs.find((j) => j.traceId === traceId)!;
    };
    const refused = await jobOf(scoreName, { value: 5, reasoning: 'too generous' });
    expect(refused).toMatchObject({ status: 'failed', error: overReason.message.replace('would be', 'was') });
    const refusedType = await jobOf(categorical, { value: 0.5, reasoning: 'half right' });
    expect(refusedType).toMatchObject({ status: 'failed', error: typeReason.replace('would be', 'was') });
    const stored = await jobOf(scoreName, { value: 0.5, reasoning: 'half right' });
    expect(stored.status).toBe('succeeded');
    const scores = (await ctx.app.inject({ method: 'GET', url: `/api/scores?traceId=${traceId}`, headers: tenant.headers })).json().data;
    expect(scores).toEqual([expect.objectContaining({ id: stored.scoreId, name: scoreName, value: 0.5 })]);
  });

  it("another workspace's trace is not found, and its connection cannot be used", async () => {
    const check = { name: 'c', type: 'check', check: { type: 'json_parse' }, score: { name: 'j', dataType: 'boolean' }, traceId };
    const res = await call('/api/evaluators/preview', check, other);
    expect(res.statusCode).toBe(404);
    const borrowed = await call('/api/evaluators/preview', { ...judge(), traceId }, other);
    expect(borrowed.statusCode).toBe(400);
    expect(borrowed.json().error.details.issues[0].path).toBe('judge.connectionId');
  });
});
