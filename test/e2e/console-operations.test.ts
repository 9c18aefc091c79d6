import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatorWorkerFor } from '../../src/app.js';
import type { EvaluatorWorker } from '../../src/evaluators/service/worker.js';
import { createMonitorEvaluator } from '../../src/monitors/service/evaluator.js';
import { enqueueEvent } from '../../src/prompts/tables/webhook-outbox-table.js';
import { monitorMetricReader } from '../../src/traces/tables/monitor-metrics-table.js';
import { startListeningService, type ListeningService } from './sdk-server.js';
import { launchBrowser, seriousA11yViolations, watchedPage } from '../support/browser.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-model-provider.js';

/**
 * The console's operations screens in a real browser: model connections against a local fake
 * OpenAI-compatible server, an evaluator previewed on a trace and its jobs, a monitor's state
 * and history, and the usage page's figures.
 */

const API_KEY = 'sk-console-SECRET-key-4f2e';
const shots = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

let service: ListeningService;
let fake: FakeProvider;
let browser: Browser;
let page: Page;
let problems: string[];
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });
const pageFits = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

async function checkScreen(name: string) {
  expect(await seriousA11yViolations(page), `accessibility of ${name}`).toEqual([]);
  expect(problems, `console errors or CSP violations on ${name}`).toEqual([]);
  expect(await pageFits(), `${name} fits the window`).toBe(true);
}

/** A finished trace of `spans` spans whose root says `question` and answers `answer`. */
function qaTrace(traceId: string, start: number, spans: number, answer = '4') {
  const at = (ms: number) => new Date(start + ms).toISOString();
  return {
    traceId,
    name: 'qa',
    source: 'sdk',
    environment: 'production',
    spans: Array.from({ length: spans }, (_, i) => ({
      spanId: `${traceId}-${i}`,
      ...(i > 0 ? { parentSpanId: `${traceId}-0` } : {}),
      name: i === 0 ? 'answer' : `step ${i}`,
      kind: i === 0 ? 'agent' : 'tool',
      startTime: at(i),
      endTime: at(100),
      durationMs: 100 - i,
      status: 'ok',
      ...(i === 0 ? { input: { text: 'What is 2 + 2?' }, output: { text: answer } } : {}),
    })),
  };
}

/**
 * Ingest is acknowledged once logged, before its rows are stored (the API's list shows them at
 * once, the evaluator's scan reads the store, and a loaded machine can take many seconds to
 * flush): waits until the trace is listed, then until the worker's scan queues it.
 */
async function scanQueues(worker: EvaluatorWorker, traceId: string) {
  const listed = async () => ((await service.call('GET', '/api/traces?limit=10')).body.data as { traceId: string }[]).map((t) => t.traceId);
  await expect.poll(listed, { timeout: 90_000, interval: 250 }).toContain(traceId);
  await expect.poll(() => worker.scan(), { timeout: 90_000, interval: 250 }).toBe(1);
}

const posted = { traces: 0, spans: 0 };
async function postTrace(trace: ReturnType<typeof qaTrace>) {
  expect((await service.call('POST', '/api/traces', { traces: [trace] })).body.data.accepted).toBe(1);
  posted.traces += 1;
  posted.spans += trace.spans.length;
}

beforeAll(async () => {
  fake = await startFakeProvider();
  service = await startListeningService({ env: { LOUPE_ENCRYPTION_KEY: 'ef'.repeat(32), LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  browser = await launchBrowser();
  // The preview of a trace that does not exist answers 404 on purpose.
  const watched = await watchedPage(browser, /\/api\/evaluators\/preview$/);
  page = watched.page;
  problems = watched.problems;
  await postTrace(qaTrace('qa-first', Date.now() - 60_000, 3));
  await postTrace(qaTrace('qa-second', Date.now() - 50_000, 2));
  const prompt = await service.call('POST', '/api/prompt', {
    name: 'grader',
    systemPrompt: 'You grade answers.',
    humanPrompt: 'Question: {question}\nAnswer: {answer}\nScore 0..1.',
  });
  expect(prompt.status).toBe(201);
  await page.goto(`${service.baseUrl}/sign-in`);
  await page.getByLabel('API key').fill(service.apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/traces$/);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await fake?.close();
});

describe('operations in the web console', () => {
  it('shows the usage figures and the retention read only', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(/\/settings\/usage$/);
    await poll(() => page.locator('[data-usage="traces"]').textContent()).toBe(String(posted.traces));
    expect(await page.locator('[data-usage="spans"]').textContent()).toBe(String(posted.spans));
    const usage = (await service.call('GET', '/api/usage')).body.data;
    expect(usage.storage.bytesOnDisk).toBeGreaterThan(0);
    expect(await page.locator('[data-usage="oldest"]').textContent()).not.toBe('—');
    expect(await page.locator('[data-effective-days]').textContent()).toBe('forever');
    expect(await page.getByRole('textbox').count()).toBe(0);
    await checkScreen('usage');
  });

  it('creates a model connection, shows only the key’s last 4 characters, and tests it', async () => {
    await page.getByRole('link', { name: 'Model connections' }).click();
    await page.waitForURL(/\/settings\/connections$/);
    await page.getByRole('button', { name: 'New connection' }).click();
    const form = page.getByRole('form', { name: 'New model connection' });
    await form.getByLabel('Name').fill('fake judge');
    await form.getByLabel('Base URL').fill(fake.url);
    await form.getByLabel('API key').fill(API_KEY);
    await form.getByLabel('Default model').fill('judge-1');
    await form.getByRole('button', { name: 'Create connection' }).click();
    const row = page.locator('tr[data-connection="fake judge"]');
    await row.waitFor();
    expect(await row.getByLabel('Key ending').textContent()).toBe(`…${API_KEY.slice(-4)}`);
    expect(await page.content()).not.toContain(API_KEY);

    fake.answer = 'OK';
    await row.getByRole('button', { name: 'Test fake judge' }).click();
    await poll(() => row.getByRole('status').textContent()).toContain('OK');
    fake.failures.push(500);
    await row.getByRole('button', { name: 'Test fake judge' }).click();
    await poll(() => row.getByRole('status').textContent()).toContain('500');
    expect(await row.getByRole('status').textContent()).toContain('fake failure 500');
    expect(await page.content()).not.toContain(API_KEY);
    await checkScreen('model connections');
  });

  it('creates an evaluator from a judge prompt, previews it on a trace, and shows its jobs', async () => {
    await page.getByRole('link', { name: 'Evaluators' }).click();
    await page.waitForURL(/\/evaluators$/);
    await page.getByRole('button', { name: 'New evaluator' }).click();
    const form = page.getByRole('form', { name: 'New evaluator' });
    await form.getByLabel('Name', { exact: true }).fill('correctness');
    await form.getByLabel('Model connection').selectOption({ label: 'fake judge (judge-1)' });
    await form.getByLabel('Judge prompt').selectOption('grader');
    await form.getByLabel('{question} from').fill('input');
    await form.getByLabel('{answer} from').fill('output');
    await form.getByLabel('Score name').fill('correctness');
    await form.getByLabel('Delay after the trace ends (s)').fill('0');

    // The preview: one call to the judge with this definition, nothing stored.
    fake.answer = { value: 0.8, reasoning: 'right, but terse' };
    const before = fake.requests.length;
    const preview = page.getByRole('region', { name: 'Preview on a trace' });
    await preview.getByLabel('Trace id').fill('qa-missing');
    await preview.getByRole('button', { name: 'Run preview' }).click();
    await poll(() => preview.getByRole('alert').textContent()).toContain('Trace not found');
    await preview.getByLabel('Trace id').fill('qa-first');
    await preview.getByRole('button', { name: 'Run preview' }).click();
    const result = preview.getByRole('definition').first();
    await poll(() => result.textContent()).toBe('0.8');
    expect(await preview.textContent()).toContain('right, but terse');
    expect(fake.requests.length - before).toBe(1);
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('Question: What is 2 + 2?\\nAnswer: 4');
    expect((await service.call('GET', '/api/evaluators')).body.data).toEqual([]);
    expect((await service.call('GET', '/api/scores?traceId=qa-first')).body.data).toEqual([]);
    await checkScreen('evaluator form with a preview');

    await form.getByRole('button', { name: 'Create evaluator' }).click();
    await page.waitForURL(/\/evaluators\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();
    const [evaluator] = (await service.call('GET', '/api/evaluators')).body.data;
    expect(evaluator).toMatchObject({
      name: 'correctness',
      status: 'active',
      judge: { prompt: { name: 'grader' }, variables: { question: 'input', answer: 'output' } },
      score: { name: 'correctness', dataType: 'numeric' },
      target: { samplingRate: 1, delaySeconds: 0 },
    });

    // A new trace after the evaluator was made is judged once; a malformed answer fails a job.
    await postTrace(qaTrace('qa-judged', Date.now(), 2));
    const worker = evaluatorWorkerFor(
      { ...service.stores, writer: service.writer },
      { retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } },
    );
    fake.answer = { value: 1, reasoning: 'correct' };
    await scanQueues(worker, 'qa-judged');
    await worker.runOnce();
    await postTrace(qaTrace('qa-malformed', Date.now(), 1));
    fake.answer = 'no verdict';
    await scanQueues(worker, 'qa-malformed');
    await worker.runOnce();

    await page.reload();
    const succeeded = page.locator('tr[data-job-trace="qa-judged"]');
    await succeeded.waitFor();
    expect(await succeeded.getAttribute('data-job-status')).toBe('succeeded');
    const failed = page.locator('tr[data-job-trace="qa-malformed"]');
    expect(await failed.getAttribute('data-job-status')).toBe('failed');
    expect(await failed.textContent()).toContain('not JSON');
    await page.screenshot({ path: path.join(shots, 'evaluator.png') });
    await page.getByLabel('Status').selectOption('failed');
    await poll(() => page.locator('tr[data-job-trace]').count()).toBe(1);
    await checkScreen('evaluator jobs');

    // Edited, it is a new version.
    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit evaluator' });
    await edit.getByLabel('Sampling rate (0–1)').fill('0.5');
    await edit.getByRole('button', { name: 'Save as a new version' }).click();
    await poll(() => page.locator('header').textContent()).toContain('version 2');
    expect((await service.call('GET', `/api/evaluators/${evaluator.id}`)).body.data).toMatchObject({
      version: 2,
      target: { samplingRate: 0.5 },
      judge: { variables: { question: 'input', answer: 'output' } },
    });

    // Pause from the page; the produced score links to its trace, which shows it.
    await page.getByRole('button', { name: 'Pause correctness' }).click();
    await poll(async () => (await service.call('GET', `/api/evaluators/${evaluator.id}`)).body.data.status).toBe('paused');
    await page.getByLabel('Status').selectOption('');
    await succeeded.getByRole('link', { name: 'on the trace' }).click();
    await page.waitForURL(/\/traces\/qa-judged$/);
    await poll(() => page.getByRole('list', { name: 'Trace scores' }).textContent()).toContain('correctness');
  }, 300_000);

  it('creates a monitor and shows it firing with its episode', async () => {
    await page.getByRole('link', { name: 'Monitors' }).click();
    await page.waitForURL(/\/monitors$/);
    await page.getByRole('button', { name: 'New monitor' }).click();
    const form = page.getByRole('form', { name: 'New monitor' });
    await form.getByLabel('Name', { exact: true }).fill('traffic');
    await form.getByLabel('Metric').selectOption('trace_count');
    await form.getByLabel('Threshold value').fill('2');
    await form.getByLabel('Environment').fill('production');
    await form.getByLabel('Trace name').fill('qa');
    await form.getByRole('button', { name: 'Create monitor' }).click();
    await page.waitForURL(/\/monitors\/[0-9a-f-]{36}$/);
    await page.getByText('It has never fired.').waitFor();
    const [monitor] = (await service.call('GET', '/api/monitors')).body.data;
    expect(monitor).toMatchObject({
      name: 'traffic',
      metric: 'trace_count',
      windowSeconds: 3600,
      filters: { environment: 'production', name: 'qa' },
      condition: { kind: 'threshold', direction: 'above', value: 2 },
      state: 'ok',
    });

    const evaluator = createMonitorEvaluator({
      sql: service.stores.sql,
      metrics: monitorMetricReader(service.stores.clickhouse),
      enqueue: enqueueEvent,
    });
    expect(await evaluator.evaluateAll()).toMatchObject({ fired: 1 });
    await page.reload();
    await poll(() => page.locator('h1 [data-state]').getAttribute('data-state')).toBe('firing');
    expect(await page.locator('[data-last-value]').textContent()).toBe(String(posted.traces));
    await poll(() => page.locator('tr[data-episode]').count()).toBe(1);
    await checkScreen('monitor');
    await page.screenshot({ path: path.join(shots, 'monitor.png') });
    await page.getByRole('link', { name: 'Monitors' }).first().click();
    await poll(() => page.locator('tr[data-monitor="traffic"] [data-state]').getAttribute('data-state')).toBe('firing');
    await checkScreen('monitors');

    // Edited above the traffic, it resolves at the next evaluation; the episode is closed.
    await page.getByRole('link', { name: 'traffic' }).click();
    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit monitor' });
    await edit.getByLabel('Threshold value').fill('100');
    await edit.getByRole('button', { name: 'Save monitor' }).click();
    await poll(async () => (await service.call('GET', `/api/monitors/${monitor.id}`)).body.data.condition.value).toBe(100);
    expect(await evaluator.evaluateAll()).toMatchObject({ resolved: 1 });
    await page.reload();
    await poll(() => page.locator('h1 [data-state]').getAttribute('data-state')).toBe('resolved');
    await poll(() => page.locator('tr[data-episode]').count()).toBe(1);
    expect(await page.locator('tr[data-episode] [data-state]').count()).toBe(0);
  });

  it("offers the workspace's score names for a score monitor, and takes a name not seen yet", async () => {
    await page.getByRole('link', { name: 'Monitors' }).first().click();
    await page.waitForURL(/\/monitors$/);
    await page.getByRole('button', { name: 'New monitor' }).click();
    const form = page.getByRole('form', { name: 'New monitor' });
    await form.getByLabel('Metric').selectOption('score_mean');
    // The evaluator above scored under `correctness`: the picker offers it.
    await poll(() =>
      form.locator('datalist#monitor-score-names option').evaluateAll((o) => o.map((e) => (e as HTMLOptionElement).value)),
    ).toContain('correctness');
    expect(await form.getByLabel('Score name').getAttribute('list')).toBe('monitor-score-names');
    await form.getByLabel('Name', { exact: true }).fill('tone watch');
    await form.getByLabel('Score name').fill('tone-not-sent-yet');
    await form.getByLabel('Threshold value').fill('0.5');
    await form.getByRole('button', { name: 'Create monitor' }).click();
    await page.waitForURL(/\/monitors\/[0-9a-f-]{36}$/);
    const monitors = (await service.call('GET', '/api/monitors')).body.data as Array<{ name: string; scoreName?: string }>;
    expect(monitors.find((m) => m.name === 'tone watch')).toMatchObject({ metric: 'score_mean', scoreName: 'tone-not-sent-yet' });
  });
});
