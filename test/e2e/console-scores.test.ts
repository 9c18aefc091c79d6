import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListeningService, type ListeningService } from './sdk-server.js';
import { launchBrowser, seriousA11yViolations, watchedPage, signIn } from '../support/browser.js';
import { agentTrace } from './console-fixtures.js';

let service: ListeningService;
let browser: Browser;
let page: Page;
let problems: string[];
/** Waits for the page to show what is expected: a loaded shared machine can take seconds. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });

interface StoredScore {
  id: string;
  name: string;
  value: number;
  stringValue: string | null;
  comment: string | null;
  source: string;
}
const scoresOf = async (traceId: string): Promise<StoredScore[]> => (await service.call('GET', `/api/scores?traceId=${traceId}`)).body.data;

/** Nothing wider than the window: long user names are clipped, not spread. */
const pageFits = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

async function checkScreen(name: string) {
  expect(await seriousA11yViolations(page), `accessibility of ${name}`).toEqual([]);
  expect(problems, `console errors or CSP violations on ${name}`).toEqual([]);
  expect(await pageFits(), `${name} fits the window`).toBe(true);
}

// Wikipedia "Welch's t-test", example 1: A2 is better than A1 (p = 0.021).
const a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
const a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
const longName = `groundedness-${'x'.repeat(180)}`;

beforeAll(async () => {
  service = await startListeningService();
  browser = await launchBrowser();
  const watched = await watchedPage(browser, /^$/);
  page = watched.page;
  problems = watched.problems;
  await signIn(page, service.baseUrl, service.apiKey);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('scores in the web console', () => {
  it('creates and archives score configs on the Scores settings page', async () => {
    await page.getByRole('link', { name: 'Scores' }).click();
    await page.waitForURL(/\/settings\/scores$/);
    await page.getByRole('button', { name: 'New config' }).click();
    const form = page.getByRole('form', { name: 'New score config' });
    await form.getByLabel('Name').fill('accuracy');
    await form.getByLabel('Minimum').fill('0');
    await form.getByLabel('Maximum').fill('5');
    await form.getByRole('button', { name: 'Create config' }).click();
    await page.locator('tr[data-config="accuracy"]').waitFor();
    await page.getByRole('button', { name: 'New config' }).click();
    await form.getByLabel('Name').fill('tone');
    await form.getByLabel('Type').selectOption('categorical');
    await form.getByLabel(/Categories/).fill('warm=1, cold=0');
    await form.getByRole('button', { name: 'Create config' }).click();
    await page.locator('tr[data-config="tone"]').waitFor();
    const configs = (await service.call('GET', '/api/score-configs')).body.data;
    expect(configs.find((c: { name: string }) => c.name === 'accuracy')).toMatchObject({ dataType: 'numeric', min: 0, max: 5 });
    expect(configs.find((c: { name: string }) => c.name === 'tone')).toMatchObject({
      dataType: 'categorical',
      categories: [
        { label: 'warm', value: 1 },
        { label: 'cold', value: 0 },
      ],
    });
    // Archived: kept, marked, and gone from the live configs the annotation controls use.
    await page.getByRole('button', { name: 'Archive tone' }).click();
    await poll(() => page.locator('tr[data-config="tone"]').textContent()).toContain('archived');
    expect((await service.call('GET', '/api/score-configs')).body.data.map((c: { name: string }) => c.name)).toEqual(['accuracy']);
    for (const body of [
      { name: 'helpful', dataType: 'boolean' },
      { name: longName, dataType: 'numeric', min: 0, max: 1 },
    ])
      expect((await service.call('POST', '/api/score-configs', body)).status).toBe(201);
    await page.reload();
    await page.locator(`tr[data-config="${longName}"]`).waitFor();
    await checkScreen('score settings');
  });

  it('annotates a trace with a boolean and a numeric score, edits and deletes them; a span shows its scores', async () => {
    const start = Date.now() - 60_000;
    expect((await service.call('POST', '/api/traces', { traces: [agentTrace('trace-scored', start)] })).body.data.accepted).toBe(1);
    // An evaluator's score on the root span: shown in the span panel, not deletable here.
    const evalScore = {
      name: 'relevance',
      value: 0.75,
      source: 'eval',
      traceId: 'trace-scored',
      spanId: 'trace-scored-root',
      comment: 'on topic',
    };
    expect((await service.call('POST', '/api/scores', evalScore)).body.data.accepted).toBe(1);

    await page.goto(`${service.baseUrl}/traces/trace-scored`);
    const annotate = page.getByRole('region', { name: 'Annotate this trace' });
    await annotate.waitFor();
    // The live configs only: the archived one is not offered.
    expect(await annotate.getByRole('group', { name: 'Annotate tone' }).count()).toBe(0);
    const traceScores = page.getByRole('list', { name: 'Trace scores' });

    await annotate.getByLabel(/Comment/).fill('answered the question');
    await annotate.getByRole('group', { name: 'Annotate helpful' }).getByRole('button', { name: 'true' }).click();
    await traceScores.locator('li[data-score-name="helpful"]').waitFor();
    await annotate.getByLabel('Value of accuracy').fill('4');
    await annotate.getByRole('group', { name: 'Annotate accuracy' }).getByRole('button', { name: 'Save' }).click();
    await traceScores.locator('li[data-score-name="accuracy"]').waitFor();

    const helpful = traceScores.locator('li[data-score-name="helpful"]');
    expect(await helpful.getByTestId('score-value').textContent()).toBe('true');
    expect(await helpful.textContent()).toContain('answered the question');
    expect(await helpful.textContent()).toContain('by you');
    expect(await helpful.textContent()).toContain('annotation');
    const accuracy = traceScores.locator('li[data-score-name="accuracy"]');
    expect(await accuracy.getByTestId('score-value').textContent()).toBe('4');
    const stored = await scoresOf('trace-scored');
    const trace = stored.filter((s) => s.source === 'annotation');
    expect(trace.map((s) => [s.name, s.value, s.stringValue]).sort()).toEqual([
      ['accuracy', 4, null],
      ['helpful', 1, 'true'],
    ]);
    const accuracyId = trace.find((s) => s.name === 'accuracy')!.id;

    // The span panel shows the evaluator's score, without a delete button (not this author's annotation).
    const spanScores = page.getByRole('list', { name: 'Scores of span support-agent' });
    await spanScores.waitFor();
    expect(await spanScores.textContent()).toContain('relevance');
    expect(await spanScores.textContent()).toContain('0.750');
    expect(await spanScores.textContent()).toContain('eval');
    expect(await spanScores.textContent()).toContain('on topic');
    expect(await spanScores.getByRole('button').count()).toBe(0);
    await checkScreen('trace with scores');

    // Edit: the same score corrected (its id re-sent), not a second one.
    await annotate.getByLabel('Value of accuracy').fill('2');
    await annotate.getByRole('group', { name: 'Annotate accuracy' }).getByRole('button', { name: 'Update' }).click();
    await poll(() => accuracy.getByTestId('score-value').textContent()).toBe('2');
    const afterEdit = (await scoresOf('trace-scored')).filter((s) => s.name === 'accuracy');
    expect(afterEdit.map((s) => [s.id, s.value])).toEqual([[accuracyId, 2]]);
    await annotate.getByRole('group', { name: 'Annotate helpful' }).getByRole('button', { name: 'false' }).click();
    await poll(() => helpful.getByTestId('score-value').textContent()).toBe('false');
    expect((await scoresOf('trace-scored')).filter((s) => s.name === 'helpful').map((s) => s.stringValue)).toEqual(['false']);

    // A value outside the config's range: the field refuses it, nothing is sent.
    await annotate.getByLabel('Value of accuracy').fill('9');
    await annotate.getByRole('group', { name: 'Annotate accuracy' }).getByRole('button', { name: 'Update' }).click();
    expect(await annotate.getByLabel('Value of accuracy').evaluate((el) => (el as HTMLInputElement).validity.rangeOverflow)).toBe(true);
    expect((await scoresOf('trace-scored')).find((s) => s.name === 'accuracy')!.value).toBe(2);

    // Delete: gone from the page and the API.
    await traceScores.getByRole('button', { name: 'Delete score helpful' }).click();
    await poll(() => helpful.count()).toBe(0);
    expect((await scoresOf('trace-scored')).map((s) => s.name).sort()).toEqual(['accuracy', 'relevance']);
    expect(await pageFits()).toBe(true);
  });

  it('shows score averages as columns of the trace list and filters by a score in the URL', async () => {
    const start = Date.now() - 120_000;
    expect(
      (await service.call('POST', '/api/traces', { traces: [agentTrace('trace-good', start, { sessionId: 'conv-2' })] })).body.data
        .accepted,
    ).toBe(1);
    expect(
      (
        await service.call('POST', '/api/scores', {
          scores: [
            { name: 'accuracy', value: 5, traceId: 'trace-good' },
            { name: 'accuracy', value: 4, traceId: 'trace-good', spanId: 'trace-good-root' },
            { name: longName, value: 0.5, traceId: 'trace-good' },
          ],
        })
      ).body.data.accepted,
    ).toBe(3);
    const api = (await service.call('GET', '/api/traces?limit=50')).body.data as Array<{
      traceId: string;
      scores?: Record<string, { n: number; mean: number }>;
    }>;
    expect(api.find((t) => t.traceId === 'trace-good')!.scores!.accuracy).toEqual({ n: 2, mean: 4.5 });

    await page.goto(`${service.baseUrl}/traces`);
    const rows = page.locator('tbody tr[data-trace-id]');
    await poll(() => rows.count()).toBe(2);
    await page.locator('th[data-score-column="accuracy"]').waitFor();
    expect(await page.locator('tr[data-trace-id="trace-good"] td[data-score="accuracy"]').textContent()).toBe('4.50');
    expect(await page.locator('tr[data-trace-id="trace-scored"] td[data-score="accuracy"]').textContent()).toBe('2');
    expect(await page.locator('tr[data-trace-id="trace-scored"] td[data-score="relevance"]').textContent()).toBe('0.75');
    expect(await page.locator(`tr[data-trace-id="trace-scored"] td[data-score="${longName}"]`).textContent()).toBe('—');
    await checkScreen('traces with score columns');

    await page.getByLabel('Score', { exact: true }).fill('accuracy');
    await page.getByLabel('Score at least').fill('3');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/score=accuracy&scoreMin=3/);
    await poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')))).toEqual(['trace-good']);
    // From the URL alone (a shared link): the same rows, the fields filled in.
    await page.reload();
    await poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')))).toEqual(['trace-good']);
    expect(await page.getByLabel('Score at least').inputValue()).toBe('3');
    await page.goto(`${service.baseUrl}/traces?score=accuracy&scoreMax=3`);
    await poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')))).toEqual(['trace-scored']);
  });

  it('compares two prompt versions by their scores with the verdicts', async () => {
    // Lower slowness is better: the same rise is a worse verdict.
    expect(
      (await service.call('POST', '/api/score-configs', { name: 'slowness', dataType: 'numeric', higherIsBetter: false })).status,
    ).toBe(201);
    const created = await service.call('POST', '/api/prompt', { name: 'greeter', systemPrompt: 'a' });
    const baselineId = created.body.data.id as number;
    const next = await service.call('POST', `/api/prompt/${baselineId}/versions`, {
      newVersion: '1.1.0',
      changes: { systemPrompt: 'b', isLatest: true },
    });
    const subjectId = next.body.data.id as number;
    const now = Date.now();
    for (const [version, values] of [
      ['1.0.0', a1],
      ['1.1.0', a2],
    ] as const) {
      const traceId = `greet-${version}`;
      const spans = values.map((_, i) => ({
        spanId: `s${i}`,
        name: 'greet',
        kind: 'llm.chat',
        promptName: 'greeter',
        promptVersion: version,
        startTime: new Date(now - 60_000 + i).toISOString(),
        endTime: new Date(now - 59_000 + i * 2).toISOString(),
        durationMs: 1000 + i,
        status: 'ok',
      }));
      const ingested = await service.call('POST', '/api/traces', { traces: [{ traceId, name: 'greet', source: 'sdk', spans }] });
      expect(ingested.body.data, JSON.stringify(ingested.body)).toMatchObject({ accepted: 1 });
      const scores = values.flatMap((value, i) => [
        { name: 'accuracy', value: value / 10, traceId, spanId: `s${i}` },
        { name: 'slowness', value, traceId, spanId: `s${i}` },
        { name: 'tone', value: i % 2 ? 'warm' : 'cold', traceId, spanId: `s${i}` },
      ]);
      expect((await service.call('POST', '/api/scores', { scores })).body.data.rejected).toBe(0);
    }
    const api = (await service.call('GET', `/api/prompt/${subjectId}/compare?against=${baselineId}`)).body.data;
    const verdicts = Object.fromEntries(api.scores.map((s: { name: string; verdict: string }) => [s.name, s.verdict]));
    expect(verdicts).toEqual({ accuracy: 'better', slowness: 'worse', tone: 'no significant difference' });

    await page.goto(`${service.baseUrl}/prompts/greeter?from=1.0.0&to=1.1.0`);
    await page.getByRole('button', { name: 'Compare versions' }).click();
    await page.waitForURL(/view=compare/);
    const table = page.getByRole('table', { name: 'Scores by version' });
    await table.waitFor();
    for (const s of api.scores as Array<{ name: string; verdict: string; pValue: number; subject: { n: number } }>) {
      const row = table.locator(`tr[data-score="${s.name}"]`);
      expect(await row.getByTestId('verdict').textContent()).toBe(s.verdict);
      expect(await row.textContent()).toContain(String(Number(s.pValue.toFixed(4))));
      expect(await row.textContent()).toContain(String(s.subject.n));
    }
    const calls = page.getByRole('table', { name: 'Calls by version' });
    expect(await calls.locator('tr[data-version="1.1.0"]').textContent()).toContain(String(api.subject.calls));
    expect(await calls.locator('tr[data-version="1.0.0"]').textContent()).toContain('baseline');
    await checkScreen('compare versions');
  });
});
