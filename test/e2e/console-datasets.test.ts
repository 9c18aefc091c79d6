import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Loupe, type ExperimentSummary } from '../../packages/sdk/src/index.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { startListeningService, type ListeningService } from './sdk-server.js';
import { launchBrowser, seriousA11yViolations, watchedPage, signIn } from '../support/browser.js';
import { agentTrace } from './console-fixtures.js';

const shots = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
let service: ListeningService;
let browser: Browser;
let page: Page;
let problems: string[];
/** Another workspace's key, and its dataset and run: never to be seen from this one. */
let other: { key: string; datasetId: string; runId: string };
let datasetId = '';
let spanItemId = '';
const runs: Record<'baseline' | 'candidate', ExperimentSummary | undefined> = { baseline: undefined, candidate: undefined };
/** Waits for the page to show what is expected: a loaded shared machine can take seconds. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });
const pageFits = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

async function checkScreen(name: string, screenshot = false) {
  if (screenshot) await page.screenshot({ path: path.join(shots, `${name}.png`) });
  expect(await seriousA11yViolations(page), `accessibility of ${name}`).toEqual([]);
  expect(problems, `console errors or CSP violations on ${name}`).toEqual([]);
  expect(await pageFits(), `${name} fits the window`).toBe(true);
}

async function otherCall(method: 'GET' | 'POST', route: string, body?: unknown) {
  const res = await fetch(`${service.baseUrl}${route}`, {
    method,
    headers: { 'x-api-key': other.key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as { data: any } };
}

// The arithmetic items: q00…q54 add a and b. The baseline multiplies when a is a multiple of 5
// (wrong but for a = 2, never a multiple of 5); the candidate adds always but throws on a = 7.
const count = 55;
const qId = (a: number) => `q${String(a).padStart(2, '0')}`;
const baselineWrong = (a: number) => a % 5 === 0;
const candidateFails = (a: number) => a === 7;

beforeAll(async () => {
  service = await startListeningService();
  const organization = await tenancy.createOrganization(service.stores.sql, {
    name: 'other-team',
    plan: 'enterprise',
    rateLimitPerMinute: 100_000,
    rateLimitPerDay: 1_000_000,
  });
  const workspace = await tenancy.createWorkspace(service.stores.sql, organization.id, 'theirs');
  const { key } = await tenancy.createApiKey(service.stores.sql, {
    scope: 'workspace',
    organizationId: organization.id,
    workspaceId: workspace.id,
  });
  other = { key, datasetId: '', runId: '' };
  const dataset = await otherCall('POST', '/api/datasets', { name: 'other-team-cases' });
  expect(dataset.status).toBe(201);
  other.datasetId = dataset.body.data.id as string;
  const run = await otherCall('POST', `/api/datasets/${other.datasetId}/runs`, { name: 'their-run' });
  expect(run.status).toBe(201);
  other.runId = run.body.data.id as string;
  expect((await otherCall('POST', '/api/scores', { name: 'their-score', value: 42, traceId: 'their-trace' })).status).toBe(200);

  browser = await launchBrowser();
  // The other workspace's dataset and run, opened on purpose: 404 for this workspace.
  const watched = await watchedPage(browser, new RegExp(`/api/datasets/${other.datasetId}(/|\\?|$)`));
  page = watched.page;
  problems = watched.problems;
  await signIn(page, service.baseUrl, service.apiKey);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('datasets and runs in the web console', () => {
  it('creates a dataset, adds a span to it from the trace page, adds items as JSON, pages and archives them', async () => {
    expect((await service.call('POST', '/api/traces', { traces: [agentTrace('trace-ds', Date.now() - 60_000)] })).body.data.accepted).toBe(
      1,
    );

    await page.getByRole('link', { name: 'Datasets' }).click();
    await page.waitForURL(/\/datasets$/);
    // The other workspace has a dataset; this one has none.
    await page.getByRole('heading', { name: 'No datasets yet' }).waitFor();
    expect(await page.textContent('main')).not.toContain('other-team-cases');

    await page.getByRole('button', { name: 'New dataset' }).click();
    const form = page.getByRole('form', { name: 'New dataset' });
    await form.getByLabel('Name').fill('support-cases');
    await form.getByLabel('Description').fill('warranty questions');
    await form.getByRole('button', { name: 'Create dataset' }).click();
    await page.waitForURL(/\/datasets\/[0-9a-f-]{36}$/);
    datasetId = new URL(page.url()).pathname.split('/')[2]!;
    await page.getByRole('heading', { name: 'support-cases' }).waitFor();
    expect((await service.call('GET', `/api/datasets/${datasetId}`)).body.data).toMatchObject({
      name: 'support-cases',
      description: 'warranty questions',
    });

    // "Add to dataset" on the chat span: the span's input and output become the item's.
    await page.goto(`${service.baseUrl}/traces/trace-ds?span=trace-ds-chat`);
    const add = page.getByRole('form', { name: 'Add to dataset' });
    await add.waitFor();
    const offered = await add.getByLabel('Dataset').evaluate((el) => [...(el as HTMLSelectElement).options].map((o) => o.text));
    expect(offered).toEqual(['support-cases']);
    await add.getByRole('button', { name: 'Add to dataset' }).click();
    await poll(() => add.getByRole('status').textContent()).toContain('Added as item');
    const stored = (await service.call('GET', `/api/datasets/${datasetId}/items`)).body.data;
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      sourceTraceId: 'trace-ds',
      sourceSpanId: 'trace-ds-chat',
      input: { messages: [{ role: 'system' }, { role: 'user', content: 'Is my kettle under warranty?' }] },
      expectedOutput: { messages: [{ role: 'assistant', content: 'Let me check your order.' }] },
    });
    spanItemId = stored[0].id as string;
    expect(await add.getByRole('status').textContent()).toContain(spanItemId);
    await checkScreen('trace with add to dataset');

    await add.getByRole('link', { name: 'support-cases' }).click();
    await page.waitForURL(new RegExp(`/datasets/${datasetId}$`));
    const rows = page.locator('table[aria-label="Items"] tbody tr');
    await poll(() => rows.count()).toBe(1);
    const spanRow = page.locator(`tr[data-item-id="${spanItemId}"]`);
    expect(await spanRow.getByLabel(`Input of ${spanItemId}`).first().textContent()).toContain('Is my kettle under warranty?');
    expect(await spanRow.getByRole('link', { name: 'trace-ds-chat' }).getAttribute('href')).toBe('/traces/trace-ds?span=trace-ds-chat');

    // Items as JSON: 55 good ones and one without input, refused naming its path.
    const items = Array.from({ length: count }, (_, a) => ({ id: qId(a), input: { a, b: 2 }, expectedOutput: a + 2 }));
    await page.getByRole('button', { name: 'Add items as JSON' }).click();
    const json = page.getByRole('form', { name: 'Add items' });
    await json.getByRole('textbox').fill(JSON.stringify([...items, { id: 'no-input' }]));
    await json.getByRole('button', { name: 'Add items' }).click();
    await poll(() => page.getByTestId('add-items-result').textContent()).toBe(`${count} added, 1 refused`);
    expect(await page.getByRole('list', { name: 'Refused items' }).textContent()).toContain(`items.${count}.input`);

    // Cursor pages of 50, by id: the span's item and 55 q-items are 56.
    await poll(() => rows.count()).toBe(50);
    await page.getByRole('navigation', { name: 'Pages of items' }).getByRole('button', { name: 'Next' }).click();
    await page.waitForURL(/cursor=/);
    await poll(() => rows.count()).toBe(6);
    const ids = async () => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-item-id')));
    const all = [spanItemId, ...items.map((i) => i.id)].sort();
    expect(await ids()).toEqual(all.slice(50));
    await page.getByRole('button', { name: 'First page' }).click();
    await poll(ids).toEqual(all.slice(0, 50));

    // Archive q01: gone from the active items, listed as archived, back when unarchived; archive q02 for good.
    await page.getByRole('button', { name: 'Archive item q01' }).click();
    await poll(() => page.locator('tr[data-item-id="q01"]').count()).toBe(0);
    expect((await service.call('GET', `/api/datasets/${datasetId}/items/q01`)).body.data.status).toBe('archived');
    await page.getByLabel('Status').selectOption('archived');
    await page.waitForURL(/status=archived/);
    await poll(ids).toEqual(['q01']);
    await page.getByRole('button', { name: 'Unarchive item q01' }).click();
    await poll(() => rows.count()).toBe(0);
    expect((await service.call('GET', `/api/datasets/${datasetId}/items/q01`)).body.data.status).toBe('active');
    await page.getByLabel('Status').selectOption('active');
    await page.getByRole('button', { name: 'Archive item q02' }).click();
    await poll(() => page.locator('tr[data-item-id="q02"]').count()).toBe(0);
    await checkScreen('dataset items');
  });

  it('opens the run at the URL loupe.experiment prints, with its figures', async () => {
    // Lower distance is better: its verdict is read in that direction.
    expect(
      (await service.call('POST', '/api/score-configs', { name: 'distance', dataType: 'numeric', higherIsBetter: false })).status,
    ).toBe(201);
    const loupe = new Loupe({ apiKey: service.apiKey, baseUrl: service.baseUrl, env: {} });
    const answer = (input: unknown, wrong: (a: number) => boolean, fails: (a: number) => boolean) => {
      const { a, b } = input as { a?: number; b?: number };
      if (a === undefined || b === undefined) return 'It is covered.';
      if (fails(a)) throw new Error(`cannot add ${a}`);
      return wrong(a) ? a * b : a + b;
    };
    const printed: string[] = [];
    for (const [name, wrong, fails] of [
      ['baseline', baselineWrong, () => false],
      ['candidate', () => false, candidateFails],
    ] as const) {
      runs[name] = await loupe.experiment({
        dataset: datasetId,
        name,
        metadata: { model: `adder-${name}` },
        concurrency: 8,
        print: (text) => printed.push(text),
        task: async (item) => answer(item.input, wrong, fails),
        evaluators: [
          // The span's item is answered in words: exact in both runs.
          (item, output) => ({ name: 'exact', value: typeof output === 'string' || output === item.expectedOutput }),
          (item, output) => ({
            name: 'distance',
            value: typeof output === 'number' ? Math.abs(output - (item.expectedOutput as number)) : 0,
          }),
        ],
      });
    }
    await loupe.shutdown();
    const candidate = runs.candidate!;
    expect(candidate.url).toBe(`${service.baseUrl}/datasets/${datasetId}/runs/${candidate.runId}`);
    expect(printed[1]).toContain(candidate.url);

    // The active items: the span's and q00…q54 but q02 (archived).
    const active = Array.from({ length: count }, (_, a) => a).filter((a) => a !== 2);
    await page.goto(candidate.url);
    await page.getByRole('heading', { name: 'candidate' }).waitFor();
    expect(await page.locator('[data-kpi="items"]').textContent()).toBe(String(active.length + 1));
    expect(await page.locator('[data-kpi="errors"]').textContent()).toBe('1');
    expect(await page.locator('[aria-label="Run metadata"]').textContent()).toContain('model: adder-candidate');
    const exact = page.getByRole('table', { name: 'Scores of the run' }).locator('tr[data-score="exact"]');
    // Every item but the failing one scored, all exact.
    expect(await exact.getByTestId('score-n').textContent()).toBe(String(active.length));
    expect(await exact.getByTestId('score-mean').textContent()).toBe('1');
    const failing = page.locator(`tr[data-item-id="${qId(7)}"]`);
    expect(await failing.textContent()).toContain('cannot add 7');
    expect(await page.locator('table[aria-label="Run items"] tbody tr').count()).toBe(active.length + 1);
    await checkScreen('run');

    // The baseline's figures on the dataset page: exact's mean over its items, computed here.
    const baselineRight = active.filter((a) => !baselineWrong(a)).length + 1;
    const baselineScored = active.length + 1;
    await page.goto(`${service.baseUrl}/datasets/${datasetId}`);
    const baselineRow = page.locator('tr[data-run="baseline"]');
    await poll(() => baselineRow.locator('td[data-score="exact"] strong').textContent()).toBe(
      String(Number((baselineRight / baselineScored).toFixed(3))),
    );
    // Each run's figures are a request of their own: the candidate's may come later.
    await poll(() => page.locator('tr[data-run="candidate"]').getByTestId('run-errors').textContent()).toBe('1');
    await page.locator('tr[data-run="candidate"] td[data-score="exact"] strong').waitFor();
    await checkScreen('dataset', true);
  });

  it('compares the runs: the verdicts first, items side by side, filtered to those where the runs disagree', async () => {
    const baseline = runs.baseline!;
    const candidate = runs.candidate!;
    await page.goto(`${service.baseUrl}/datasets/${datasetId}`);
    await page.getByLabel('Compare baseline').check();
    await page.getByLabel('Compare candidate').check();
    await page.getByRole('link', { name: 'Compare 2 runs' }).click();
    await page.waitForURL(new RegExp(`/datasets/${datasetId}/compare\\?runs=${baseline.runId},${candidate.runId}$`));

    const verdicts = page.getByRole('table', { name: 'Verdicts' });
    await verdicts.waitFor();
    const api = (await service.call('GET', `/api/datasets/${datasetId}/runs/compare?runs=${baseline.runId},${candidate.runId}`)).body.data;
    for (const m of api.metrics as Array<{ name: string; verdict: string; n: number }>) {
      const row = verdicts.locator(`tr[data-metric="${m.name}"]`);
      expect(await row.getByTestId('verdict').textContent()).toBe(m.verdict);
      expect(await row.textContent()).toContain(String(m.n));
    }
    // Known answers: the candidate is exact where the baseline was not (11 discordant pairs, all
    // one way: McNemar's exact p = 2 · 0.5^11), and its distances are lower (better, by the config).
    const paired = Array.from({ length: count }, (_, a) => a).filter((a) => a !== 2 && !candidateFails(a));
    const discordant = paired.filter(baselineWrong).length;
    expect(discordant).toBe(11);
    const exactRow = verdicts.locator('tr[data-metric="exact"]');
    expect(await exactRow.getByTestId('verdict').textContent()).toBe('better');
    expect(await exactRow.textContent()).toContain(String(Number((2 * 0.5 ** discordant).toFixed(4))));
    expect(await verdicts.locator('tr[data-metric="distance"]').getByTestId('verdict').textContent()).toBe('better');

    const rows = page.locator('table[aria-label="Items side by side"] tbody tr');
    const shownIds = () => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-item-id')));
    // The items either run has: q00…q54 but the archived q02, and the span's item.
    await poll(() => rows.count()).toBe(count);
    const q07 = page.locator(`tr[data-item-id="${qId(7)}"]`);
    expect(await q07.locator(`td[data-run-id="${candidate.runId}"]`).textContent()).toContain('failed');
    expect(await q07.locator(`td[data-run-id="${baseline.runId}"]`).textContent()).toContain('ok');
    await checkScreen('run comparison');

    // Where the runs disagree: the baseline's wrong answers and the candidate's failure.
    const disagreeing = Array.from({ length: count }, (_, a) => a)
      .filter((a) => a !== 2 && (baselineWrong(a) || candidateFails(a)))
      .map(qId);
    await page.getByLabel('Only items where the runs disagree').check();
    await page.waitForURL(/disagree=1/);
    await poll(shownIds).toEqual(disagreeing);
    expect(await page.getByTestId('compare-count').textContent()).toContain(`${disagreeing.length} of ${count} items loaded disagree`);
    // From the URL alone: the same items.
    await page.reload();
    await poll(shownIds).toEqual(disagreeing);
    await checkScreen('run-compare', true);
  });

  it("deletes a dataset after asking; never shows another workspace's datasets, runs or scores", async () => {
    expect((await service.call('POST', '/api/datasets', { name: 'scratch' })).status).toBe(201);
    await page.goto(`${service.baseUrl}/datasets`);
    await page.locator('tr[data-dataset="scratch"]').waitFor();
    await page.getByRole('button', { name: 'Delete dataset scratch' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this dataset?' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await poll(() => page.locator('tr[data-dataset="scratch"]').count()).toBe(0);
    expect((await service.call('GET', '/api/datasets')).body.data.map((d: { name: string }) => d.name)).toEqual(['support-cases']);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.textContent('main')).not.toContain('other-team-cases');
    for (const url of [`/datasets/${other.datasetId}`, `/datasets/${other.datasetId}/runs/${other.runId}`]) {
      await page.goto(`${service.baseUrl}${url}`);
      await poll(() => page.getByRole('alert').textContent()).toContain('404');
      expect(await page.textContent('main')).not.toContain('other-team-cases');
      expect(await page.textContent('main')).not.toContain('their-run');
    }
    // Their dataset is theirs still.
    expect((await otherCall('GET', `/api/datasets/${other.datasetId}`)).body.data.name).toBe('other-team-cases');
  });

  it('keeps a dataset, a run and an item of long unbroken names within the window', async () => {
    // As long as the API takes: names up to 200 characters, ids up to 128.
    const long = (what: string, length = 180) => `${what}-${'x'.repeat(length)}`;
    const dataset = await service.call('POST', '/api/datasets', { name: long('dataset'), description: long('description') });
    expect(dataset.status).toBe(201);
    const id = dataset.body.data.id as string;
    const item = { id: long('item', 120), input: { question: long('question') }, expectedOutput: long('answer') };
    expect((await service.call('POST', `/api/datasets/${id}/items`, item)).body.data.accepted).toBe(1);
    const run = await service.call('POST', `/api/datasets/${id}/runs`, { name: long('run'), metadata: { model: long('model') } });
    expect(run.status).toBe(201);
    const runId = run.body.data.id as string;
    const recorded = await service.call('POST', `/api/datasets/${id}/runs/${runId}/items`, {
      datasetItemId: item.id,
      traceId: 'trace-ds',
      output: long('output'),
      error: long('error'),
    });
    expect(recorded.body.data.accepted).toBe(1);

    await page.goto(`${service.baseUrl}/datasets`);
    await page.locator(`tr[data-dataset="${long('dataset')}"]`).waitFor();
    await checkScreen('datasets with a long name');
    await page.goto(`${service.baseUrl}/datasets/${id}`);
    await page
      .locator(`tr[data-run="${long('run')}"] td[data-testid="run-errors"]`)
      .filter({ hasText: '1' })
      .waitFor();
    await page.locator(`tr[data-item-id="${item.id}"]`).waitFor();
    await checkScreen('dataset with long names');
    await page.goto(`${service.baseUrl}/datasets/${id}/runs/${runId}`);
    await page.locator(`tr[data-item-id="${item.id}"]`).waitFor();
    expect(await page.locator(`tr[data-item-id="${item.id}"]`).textContent()).toContain(long('error'));
    await checkScreen('run with long names');
  });

  it('charts the scores on the Dashboard: numeric means over time and categorical distributions, with known values', async () => {
    const now = Date.now();
    const helpfulness = [0.2, 0.4, 0.9, 1];
    const tones = ['warm', 'warm', 'cold', 'warm'];
    const scores = [
      ...helpfulness.map((value, i) => ({
        name: 'helpfulness',
        value,
        traceId: 'trace-ds',
        timestamp: new Date(now - i * 1000).toISOString(),
      })),
      ...tones.map((value) => ({ name: 'tone', value, traceId: 'trace-ds' })),
    ];
    expect((await service.call('POST', '/api/scores', { scores })).body.data.rejected).toBe(0);

    await page.goto(`${service.baseUrl}/dashboard?range=24h`);
    const table = page.getByRole('table', { name: 'Scores in this window' });
    await table.waitFor();
    const row = (name: string) => table.locator(`tr[data-score="${name}"]`);
    const mean = helpfulness.reduce((a, b) => a + b, 0) / helpfulness.length;
    const sorted = [...helpfulness].sort((a, b) => a - b);
    const median = (sorted[1]! + sorted[2]!) / 2;
    expect(await row('helpfulness').getByTestId('score-count').textContent()).toBe('4');
    expect(await row('helpfulness').getByTestId('score-mean').textContent()).toBe(String(Number(mean.toFixed(3))));
    expect(await row('helpfulness').getByTestId('score-p50').textContent()).toBe(String(Number(median.toFixed(3))));
    expect(await row('tone').getByTestId('score-distribution').textContent()).toBe('warm 3 (75%) · cold 1 (25%)');
    // The experiments' scores count too: exact over both runs' scored items.
    const runItems = count - 1 + 1; // q02 archived, the span's item added
    const exactGiven = runItems + (runItems - 1); // the candidate's q07 failed, unscored
    expect(await row('exact').getByTestId('score-count').textContent()).toBe(String(exactGiven));
    // The over-time chart's points (the table the chart is drawn from): all given this hour.
    const bucket = new Date(Math.floor(now / 3_600_000) * 3_600_000).toISOString();
    const point = page.locator(`table[aria-label="Numeric scores over time, as a table"] tr[data-score="helpfulness"]`);
    // The hour may have turned while the scores were given: their points are all in one or two buckets.
    const points = await point.evaluateAll((els) =>
      els.map((e) => ({
        bucket: e.getAttribute('data-bucket'),
        count: Number(e.querySelector('[data-testid="bucket-count"]')!.textContent),
      })),
    );
    expect(points.reduce((n, p) => n + p.count, 0)).toBe(4);
    if (points.length === 1) {
      expect(points[0]!.bucket).toBe(bucket);
      expect(await point.getByTestId('bucket-mean').textContent()).toBe(String(Number(mean.toFixed(3))));
    }
    await poll(() => page.locator('.dashboard-scores .chart canvas').count()).toBe(2);
    expect(await page.textContent('main')).not.toContain('their-score');
    await checkScreen('dashboard with scores');
  });
});
