import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListeningService, type ListeningService } from './sdk-server.js';
import { launchBrowser, seriousA11yViolations, watchedPage } from '../support/browser.js';
import { seededTraces } from './console-fixtures.js';

const shots = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
let service: ListeningService;
let browser: Browser;
let page: Page;
let problems: string[];
const intl = new Intl.NumberFormat('en-US');
/** Waits for the page to show what is expected: a loaded shared machine can take seconds. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });

/** Failed loads the tests cause on purpose: the refused sign-ins and the missing trace. */
const expectedFailures = /\/api\/me$|\/api\/traces\/does-not-exist\/tree$/;

beforeAll(async () => {
  service = await startListeningService();
  browser = await launchBrowser();
  const watched = await watchedPage(browser, expectedFailures);
  page = watched.page;
  problems = watched.problems;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** A span's panel once its whole span (input, output, JSON) is loaded, not only its tree fields. */
const loadedPanel = (name: string) => page.locator(`article[aria-label="Span ${name}"][aria-busy="false"]`);

async function checkScreen(name: string) {
  await page.screenshot({ path: path.join(shots, `${name}.png`) });
  expect(await seriousA11yViolations(page), `accessibility of ${name}`).toEqual([]);
  expect(problems, `console errors or CSP violations on ${name}`).toEqual([]);
}

describe('the web console in a browser', () => {
  it('serves the app under its own strict CSP, refuses a bad key and shows how to send a first trace', async () => {
    const response = await page.goto(`${service.baseUrl}/traces`);
    const csp = response!.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    await page.waitForURL(/\/sign-in$/);
    await page.getByLabel('API key').fill('lpk_not_a_real_key_0000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByRole('alert').textContent()).toContain('This key is not accepted.');
    await checkScreen('sign-in');

    // A workspace key sent with another workspace's id: 403, said as such.
    await page.getByLabel('API key').fill(service.apiKey);
    await page.getByRole('button', { name: 'Organization or user key' }).click();
    await page.getByLabel('Workspace id').fill('00000000-0000-4000-8000-000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByRole('alert').textContent()).toContain('This key cannot reach that workspace.');
    await page.getByLabel('Workspace id').fill('');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/traces$/);
    await page.getByRole('heading', { name: 'No traces yet' }).waitFor();
    expect(await page.locator('pre[aria-label="curl example"]').textContent()).toContain(`${service.baseUrl}/api/traces`);
    // The key lives in this tab's session storage only, never in the URL.
    expect(page.url()).not.toContain(service.apiKey);
    expect(await page.evaluate(() => sessionStorage.getItem('loupe.credential'))).toContain(service.apiKey);
    await checkScreen('empty-traces');
  });

  it('lists the traces with the API figures, filters into the URL and sorts', async () => {
    // The form is rebuilt from the URL (keyed by its filters): typing before the new one is in
    // the page would be typing into the old form, which the rebuild then throws away.
    const clearFilters = async () => {
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.waitForURL((url) => url.pathname === '/traces' && url.search === '');
      await page.locator('form[data-filters=""]').waitFor();
    };
    const seeded = await service.call('POST', '/api/traces', { traces: seededTraces(Date.now()) });
    expect(seeded.body.data).toMatchObject({ accepted: 3, rejected: 0 });
    const api = (await service.call('GET', '/api/traces?limit=50')).body;

    await page.getByRole('link', { name: 'Traces' }).click();
    await page.reload();
    const rows = page.locator('tbody tr[data-trace-id]');
    await poll(() => rows.count()).toBe(api.meta.pagination.total);
    for (const trace of api.data) {
      const row = page.locator(`tr[data-trace-id="${trace.traceId}"]`);
      expect(await row.textContent()).toContain(intl.format(trace.totalTokens));
      expect(await row.textContent()).toContain(trace.name);
    }
    expect(await page.getByTestId('trace-total').textContent()).toContain(`of ${api.meta.pagination.total} traces`);

    await page.getByLabel('Status').selectOption('error');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=error/);
    await poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-trace-id')).toBe('trace-c');

    await clearFilters();
    await page.getByLabel('Environment').fill('staging');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/environment=staging/);
    await poll(() => rows.count()).toBe(1);
    await clearFilters();
    await page.getByLabel('Name').fill('refund agent');
    await page.getByLabel('User').fill('user-7');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/name=refund\+agent&userId=user-7|userId=user-7.*name=refund/);
    await poll(() => rows.count()).toBe(1);
    await clearFilters();
    await poll(() => rows.count()).toBe(3);
    // The service (an OpenTelemetry resource's name) filters too: the rows the API lists for it.
    const ofService = (await service.call('GET', '/api/traces?service=helpdesk-api')).body.data.map((t: { traceId: string }) => t.traceId);
    expect(ofService.length).toBeGreaterThan(0);
    await page.getByLabel('Service').fill('helpdesk-api');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/service=helpdesk-api/);
    await poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')))).toEqual(ofService);
    await clearFilters();
    await poll(() => rows.count()).toBe(3);
    // Full-text search (the error trace's status message): the rows the API finds, each with its snippet, the words marked.
    const searched = async () =>
      (await service.call('GET', '/api/traces?q=timed%20out')).body.data.map((t: { traceId: string }) => t.traceId);
    await poll(searched).toHaveLength(1);
    await page.getByLabel('Search').fill('TIMED OUT');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/q=TIMED\+OUT/);
    await poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')))).toEqual(await searched());
    expect(await rows.first().locator('.search-highlight mark').allTextContents()).toEqual(['timed', 'out']);
    await clearFilters();
    await poll(() => rows.count()).toBe(3);

    await page.getByRole('button', { name: 'Cost' }).click();
    await page.waitForURL(/sort=-costUsd/);
    const byCost = (await service.call('GET', '/api/traces?sort=-costUsd')).body.data.map((t: { traceId: string }) => t.traceId);
    await poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id')))).toEqual(byCost);
    await page.getByRole('button', { name: 'Duration' }).click();
    await page.waitForURL(/sort=-durationMs/);
    await poll(() => page.locator('th[aria-sort="descending"]').textContent()).toContain('Duration');
    await checkScreen('traces');
  });

  it('shows a trace: the tree beside the waterfall, a span with its conversation, keyboard navigation, a deep link', async () => {
    const trace = (await service.call('GET', '/api/traces/trace-a')).body.data;
    // The page reads the slim tree, then each selected span once (cached when selected again).
    const reads: string[] = [];
    const onRequest = (request: { url(): string }) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith('/api/traces/trace-a')) reads.push(pathname.slice('/api/traces/trace-a'.length) || '(whole trace)');
    };
    page.on('request', onRequest);
    await page.goto(`${service.baseUrl}/traces/trace-a?span=trace-a-chat`);
    const panel = loadedPanel('chat');
    await panel.waitFor();
    expect(await page.getByTestId('trace-tokens').textContent()).toBe(intl.format(trace.totalTokens));
    expect(await page.getByTestId('trace-spans').textContent()).toBe(String(trace.spans.length));
    // The conversation: roles in order, then the tool call with its arguments.
    expect(await panel.locator('.message[data-role]').evaluateAll((els) => els.map((e) => e.getAttribute('data-role')))).toEqual([
      'system',
      'user',
      'assistant',
      'tool-call',
    ]);
    expect(await panel.textContent()).toContain('Is my kettle under warranty?');
    expect(await panel.textContent()).toContain('lookup_order');
    expect(await panel.textContent()).toContain('gpt-4o-mini');
    expect(await panel.textContent()).toContain('210 ms'); // time to first token
    expect(await panel.textContent()).toContain(
      `(${trace.spans.find((sp: { spanId: string }) => sp.spanId === 'trace-a-chat').costSource})`,
    );
    expect(await panel.textContent()).toMatch(/Cache read tokens\s*120/);
    expect(await page.getByLabel('Tags').textContent()).toBe('supportbeta');
    expect(await page.locator('.page-head').textContent()).toContain('user user-7');

    const tree = page.getByRole('tree', { name: 'Spans' });
    // Selected in the URL and rendered as selected: the next key then starts from it.
    const selected = async (spanId: string) => {
      await page.waitForURL(new RegExp(`span=${spanId}$`));
      await tree.locator(`[role="treeitem"][aria-selected="true"][data-span-id="${spanId}"]`).waitFor();
    };
    expect(await tree.getByRole('treeitem').count()).toBe(5);
    await tree.focus();
    await page.keyboard.press('ArrowDown');
    await selected('trace-a-tool');
    await loadedPanel('lookup_order').waitFor();
    await page.keyboard.press('ArrowLeft'); // a leaf: to its parent
    await selected('trace-a-chat');
    await page.keyboard.press('ArrowLeft'); // expanded: collapses
    await poll(() => tree.getByRole('treeitem').count()).toBe(4);
    await page.keyboard.press('ArrowRight'); // expands again
    await poll(() => tree.getByRole('treeitem').count()).toBe(5);
    await page.keyboard.press('Home');
    await selected('trace-a-root');
    await page.keyboard.press('End');
    await selected('trace-a-final');
    const final = loadedPanel('answer');
    await final.waitFor();
    expect(await final.locator('.message[data-role]').evaluateAll((els) => els.map((e) => e.getAttribute('data-role')))).toEqual([
      'user',
      'tool',
      'assistant',
    ]);
    expect(await final.textContent()).toContain('call_1');
    // Back to a span seen before: its messages are there at once (in the render that selects
    // it), from the cache; only the spans selected were read, the whole trace never.
    await page.keyboard.press('Home');
    await selected('trace-a-root');
    expect(await loadedPanel('support-agent').textContent()).toContain('Is my kettle under warranty?');
    page.off('request', onRequest);
    expect([...new Set(reads)]).toEqual([
      '/tree',
      '/spans/trace-a-chat',
      '/spans/trace-a-tool',
      '/spans/trace-a-root',
      '/spans/trace-a-final',
    ]);

    await page.goto(`${service.baseUrl}/traces/trace-a?span=trace-a-search`);
    const search = loadedPanel('search docs');
    await search.waitFor();
    expect(await search.textContent()).toContain('Kettles carry a two-year warranty.');
    expect(await search.textContent()).toContain('score 0.920');
    await checkScreen('trace');
  });

  it('deletes a trace after confirmation and shows the API error of a missing one', async () => {
    await page.goto(`${service.baseUrl}/traces/trace-b`);
    await page.getByRole('button', { name: 'Delete trace' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this trace?' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/\/traces$/);
    expect((await service.call('GET', '/api/traces/trace-b')).status).toBe(404);

    await page.goto(`${service.baseUrl}/traces/does-not-exist`);
    const alert = page.getByRole('alert');
    await alert.getByRole('heading', { name: 'Not found' }).waitFor();
    expect(await alert.textContent()).toMatch(/404 · NOT_FOUND/);
    expect(await alert.textContent()).toMatch(/Request id/);
    await checkScreen('error');
  });

  it('shows the dashboard with the analytics figures, charts, a budget and stats by group', async () => {
    await page.goto(`${service.baseUrl}/dashboard?range=24h`);
    await page.locator('[data-kpi="traces"]').waitFor();
    const analytics = (await service.call('GET', `/api/traces/analytics?startAfter=${new Date(Date.now() - 86_400_000).toISOString()}`))
      .body.data;
    expect(await page.locator('[data-kpi="traces"]').textContent()).toBe(intl.format(analytics.totals.traceCount));
    expect(await page.locator('[data-kpi="tokens"]').textContent()).toBe(intl.format(analytics.totals.totalTokens));
    await poll(() => page.locator('.chart canvas').count()).toBeGreaterThanOrEqual(6);

    await page.getByLabel('Budget (USD)').fill('0.005');
    await page.getByLabel('Budget (USD)').press('Enter');
    await page.waitForURL(/budget=0.005/);
    await poll(() => page.getByTestId('budget').textContent()).toContain('exceeded');

    await page.getByLabel('Group by').selectOption('provider');
    await page.waitForURL(/groupBy=provider/);
    const stats = (await service.call('GET', `/api/traces/stats?groupBy=provider&from=${new Date(Date.now() - 86_400_000).toISOString()}`))
      .body.data;
    for (const group of stats.groups.filter((g: { key: string | null }) => g.key)) {
      await poll(() => page.locator(`tr[data-group="${group.key}"]`).textContent()).toContain(intl.format(group.totalTokens));
    }
    await checkScreen('dashboard');
  });

  it('lists sessions and users with the API figures; a session shows its traces on one timeline', async () => {
    const sessions = (await service.call('GET', '/api/sessions')).body.data;
    expect(sessions.length).toBeGreaterThan(0);
    await page.goto(`${service.baseUrl}/sessions`);
    for (const s of sessions) {
      const row = page.locator(`tr[data-session-id="${s.sessionId}"]`);
      await row.waitFor();
      expect(await row.textContent()).toContain(intl.format(s.totalTokens));
    }
    await checkScreen('sessions');

    await page.getByRole('link', { name: 'conv-1', exact: true }).click();
    await page.waitForURL(/\/sessions\/conv-1$/);
    const one = (await service.call('GET', '/api/sessions/conv-1')).body.data;
    await page.locator('[data-kpi="traces"]').waitFor();
    expect(await page.locator('[data-kpi="traces"]').textContent()).toBe(intl.format(one.traceCount));
    expect(await page.locator('[data-kpi="tokens"]').textContent()).toBe(intl.format(one.totalTokens));
    expect(await page.locator('.session-timeline [data-trace-id]').count()).toBe(one.traces.length);
    await checkScreen('session');

    const users = (await service.call('GET', '/api/users')).body.data;
    await page.goto(`${service.baseUrl}/users`);
    const row = page.locator('tr[data-user-id="user-7"]');
    await row.waitFor();
    const user7 = users.find((u: { userId: string }) => u.userId === 'user-7');
    expect(await row.textContent()).toContain(intl.format(user7.totalTokens));
    expect(await row.textContent()).toContain(String(user7.sessionCount));
    await checkScreen('users');
    await row.getByRole('link', { name: 'user-7' }).click();
    const userSessions = page.getByRole('table', { name: 'Sessions' });
    await userSessions.waitFor();
    expect(await page.locator('[data-kpi="traces"]').textContent()).toBe(intl.format(user7.traceCount));
    expect(await page.locator('[data-kpi="sessions"]').textContent()).toBe(intl.format(user7.sessionCount));
    const ofUser = (await service.call('GET', '/api/sessions?userId=user-7')).body.data.map((s: { sessionId: string }) => s.sessionId);
    expect(
      await userSessions.locator('tr[data-session-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id'))),
    ).toEqual(ofUser);
    await checkScreen('user');
  });

  it('lists prompts, creates a version with a bump, shows its diff and renders it naming the missing variable', async () => {
    const created = await service.call('POST', '/api/prompt', {
      name: 'support-agent',
      systemPrompt: 'You help {customer} with {product}.',
      description: 'first draft',
    });
    expect(created.status).toBe(201);
    await page.goto(`${service.baseUrl}/prompts`);
    await page.getByRole('link', { name: 'support-agent' }).click();
    await page.waitForURL(/\/prompts\/support-agent$/);
    await page.getByRole('button', { name: 'New version' }).click();
    await page.getByRole('textbox', { name: 'System template' }).fill('You help {customer} with {product}.\nAnswer in two sentences.');
    await page.getByLabel('What changed').fill('shorter answers');
    await page.getByRole('radio', { name: /minor/ }).check();
    await page.getByRole('button', { name: 'Create v1.1.0' }).click();
    await page.locator('tr[data-version="1.1.0"]').waitFor();
    expect(await page.locator('tr[data-version="1.1.0"]').textContent()).toContain('latest');
    const versions = (await service.call('GET', '/api/prompt?name=support-agent')).body.data;
    expect(versions.map((v: { version: string }) => v.version).sort()).toEqual(['1.0.0', '1.1.0']);
    const diff = page.getByTestId('prompt-diff');
    await poll(async () => (await diff.locator('.diff-add').allTextContents()).join('')).toBe(
      '+ Answer in two sentences.\n+ shorter answers\n',
    );
    expect((await diff.locator('.diff-del').allTextContents()).join('')).toBe('- first draft\n');

    await page.getByRole('textbox', { name: 'customer' }).fill('Ada');
    await page.getByRole('button', { name: 'Render' }).click();
    const rendered = page.getByTestId('rendered');
    await poll(() => rendered.textContent()).toContain('You help Ada with {product}.');
    expect(await rendered.textContent()).toContain('Missing variables: product');
    await checkScreen('prompt');

    await page.goto(`${service.baseUrl}/prompts`);
    await page.getByRole('table', { name: 'Prompts' }).waitFor();
    expect(await page.getByRole('table', { name: 'Prompts' }).textContent()).toContain('v1.1.0');
    await checkScreen('prompts');
  });

  it('signs out: the key is gone and the console asks for one again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in$/);
    expect(await page.evaluate(() => sessionStorage.getItem('loupe.credential'))).toBeNull();
    expect(problems).toEqual([]);
  });
});
