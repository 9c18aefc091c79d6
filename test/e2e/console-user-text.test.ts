import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListeningService, type ListeningService } from './sdk-server.js';
import { launchBrowser, watchedPage, signIn } from '../support/browser.js';
import { agentTrace } from './console-fixtures.js';

// User text the console must keep within the window (wrapped, or cut with the whole a hover or
// a wrap away) and ids it must link to whatever they hold: ".." is resolved away by any URL.

let service: ListeningService;
let browser: Browser;
let page: Page;
let problems: string[];
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });

const longTraceName = `trace-${'n'.repeat(894)}`; // 900 characters, no break
const longSessionId = `session-${'s'.repeat(248)}`; // the longest id accepted (256)
const longUserId = `user-${'u'.repeat(251)}`;
const longSpanName = `span-${'p'.repeat(895)}`;
const longPromptName = `prompt-${'q'.repeat(193)}`; // the longest name accepted (200)
const longLine = 'L'.repeat(100_000);
const viewport = { width: 1440, height: 900 };

beforeAll(async () => {
  service = await startListeningService();
  browser = await launchBrowser();
  const watched = await watchedPage(browser, undefined, viewport);
  page = watched.page;
  problems = watched.problems;
  const now = Date.now();
  const long = agentTrace('trace-long', now - 60_000, { sessionId: longSessionId });
  Object.assign(long, { name: longTraceName, userId: longUserId });
  Object.assign(long.spans[0]!, { name: longSpanName, input: { raw: { text: longLine } }, promptName: longPromptName });
  const dots = agentTrace('trace-dots', now - 30_000, { sessionId: '..' });
  Object.assign(dots, { userId: '..', name: 'dots' });
  const odd = agentTrace('trace-odd', now - 20_000, { sessionId: 'a/b?c#d%2Fe' });
  Object.assign(odd, { userId: '.', name: 'odd' });
  const seeded = await service.call('POST', '/api/traces', { traces: [long, dots, odd] });
  expect(seeded.body.data).toMatchObject({ accepted: 3, rejected: 0 });

  for (const name of ['..', longPromptName, '~tilde']) {
    const created = await service.call('POST', '/api/prompt', {
      name,
      systemPrompt: `first\n${longLine}`,
      description: 'D'.repeat(10_000),
    });
    expect(created.status, name).toBe(201);
    const id = created.body.data.id;
    const next = await service.call('POST', `/api/prompt/${id}/versions`, {
      newVersion: '1.1.0',
      changes: { systemPrompt: `second\n${longLine}M\n${longLine}`, isLatest: true },
      labels: ['production'],
    });
    expect(next.status, name).toBe(201);
  }

  await signIn(page, service.baseUrl, service.apiKey);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** The page's width beyond the window: 0 when nothing makes it scroll sideways. */
const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** Text is reachable when it is all on screen (wrapped, not clipped) or its whole is the element's title. */
async function reachable(selector: string, text: string) {
  const found = await page
    .locator(selector)
    .evaluateAll(
      (els, whole) =>
        els.some(
          (el) =>
            (el.getAttribute('title') === whole && (el.textContent ?? '').includes(whole)) ||
            ((el.textContent ?? '').includes(whole) && el.scrollWidth <= el.clientWidth + 1),
        ),
      text,
    );
  expect(found, `${selector} shows or titles the whole text`).toBe(true);
}

describe('the console with long user text and odd ids', () => {
  it('keeps the trace list, the trace page and its span panel within the window', async () => {
    await page.goto(`${service.baseUrl}/traces`);
    await page.locator('tr[data-trace-id="trace-long"]').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable('tr[data-trace-id="trace-long"] a', longTraceName);
    await reachable('tr[data-trace-id="trace-long"] a', longSessionId);
    await reachable('tr[data-trace-id="trace-long"] a', longUserId);

    await page.goto(`${service.baseUrl}/traces/trace-long?span=trace-long-root`);
    const panel = page.locator('article[aria-busy="false"]');
    await panel.waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable('.page-head h1 .clamp', longTraceName);
    await reachable('.crumbs span', longTraceName);
    await reachable('.page-head a', longSessionId);
    await reachable('[role="treeitem"] *', longSpanName);
    await reachable('article h2, article h3, article header *', longSpanName);
    await reachable('article a', longPromptName);
    expect(await panel.textContent()).toContain(longLine);
  });

  it('keeps sessions and users within the window; ids of "..", ".", "/", "?", "#" open their own pages', async () => {
    await page.goto(`${service.baseUrl}/sessions`);
    await page.locator(`tr[data-session-id="${longSessionId}"]`).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable(`tr[data-session-id="${longSessionId}"] a`, longSessionId);
    await reachable(`tr[data-session-id="${longSessionId}"] a`, longUserId);

    await page.getByRole('link', { name: '..', exact: true }).first().click();
    await poll(() => new URL(page.url()).pathname).not.toBe('/');
    await page.getByRole('heading', { level: 1, name: '..', exact: true }).waitFor();
    expect(
      await page.locator('.session-timeline [data-trace-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-trace-id'))),
    ).toEqual(['trace-dots']);
    // The user ".." of that session, from its link.
    await page.locator('.page-head').getByRole('link', { name: '..', exact: true }).click();
    await page.waitForURL(/\/users\//);
    await page.getByRole('heading', { level: 1, name: '..', exact: true }).waitFor();

    await page.goto(`${service.baseUrl}/sessions`);
    await page.getByRole('link', { name: 'a/b?c#d%2Fe', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'a/b?c#d%2Fe', exact: true }).waitFor();
    await page.locator('.page-head').getByRole('link', { name: '.', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: '.', exact: true }).waitFor();

    await page.goto(`${service.baseUrl}/sessions`);
    await page.getByRole('link', { name: longSessionId }).click();
    await page.getByRole('heading', { level: 1, name: longSessionId }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable('.page-head h1 .clamp', longSessionId);

    await page.goto(`${service.baseUrl}/users`);
    await page.locator(`tr[data-user-id="${longUserId}"]`).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable(`tr[data-user-id="${longUserId}"] a`, longUserId);
    await page.getByRole('link', { name: longUserId }).click();
    await page.getByRole('heading', { level: 1, name: longUserId }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable('.page-head h1 .clamp', longUserId);
    await reachable('tr[data-session-id] a', longSessionId);
  });

  it('keeps prompts, the versions table and a diff of a 100,000-character line within the window; a prompt ".." opens its page', async () => {
    await page.goto(`${service.baseUrl}/prompts`);
    await page.getByRole('table', { name: 'Prompts' }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable('table a', longPromptName);

    await page.getByRole('link', { name: '..', exact: true }).click();
    await poll(() => new URL(page.url()).pathname).not.toBe('/');
    await page.getByRole('heading', { level: 1, name: '..', exact: true }).waitFor();
    const diff = page.getByTestId('prompt-diff');
    await poll(async () => (await diff.locator('.diff-add').allTextContents()).join('')).toContain(`${longLine}M`);
    expect(await overflow()).toBeLessThanOrEqual(0);
    // The diff wraps: every line is there, none wider than its box.
    await reachable('pre.diff', `+ ${longLine}M`);
    // "latest" once on the latest version's row: the badge, not the label too.
    const latestRow = page.locator('tr[data-version="1.1.0"]');
    expect(await latestRow.locator('.badge').allTextContents()).toEqual(['v1.1.0', 'latest', 'production']);
    expect(((await latestRow.textContent()) ?? '').match(/latest/g)).toHaveLength(1);

    await page.goto(`${service.baseUrl}/prompts`);
    await page.getByRole('link', { name: '~tilde', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: '~tilde', exact: true }).waitFor();

    await page.goto(`${service.baseUrl}/prompts`);
    await page.getByRole('link', { name: longPromptName }).click();
    await page.getByRole('heading', { level: 1, name: longPromptName }).waitFor();
    await poll(async () => (await diff.locator('.diff-add').allTextContents()).join('')).toContain(`${longLine}M`);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await reachable('.page-head h1 .clamp', longPromptName);
    await reachable('.crumbs span', longPromptName);
    expect(problems).toEqual([]);
  });
});
