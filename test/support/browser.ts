import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';

const require = createRequire(import.meta.url);
export const consoleDist = fileURLToPath(new URL('../../web/dist/index.html', import.meta.url));

/** The Chromium inside the @sparticuz/chromium package: no download, no system packages. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(consoleDist)) throw new Error('web/dist is missing: build the console first (npm install, or npm run build:web)');
  const executablePath = await chromium.executablePath();
  // Its serverless flags turn off web security and put the whole browser in one process; the
  // console is tested with a browser's usual rules and processes (one process made the network
  // and the page share a thread, which added a second to a 10,000-span trace's load).
  const args = chromium.args.filter((a) => !/^--(disable-web-security|allow-running-insecure-content|headless|single-process)/.test(a));
  if (!args.includes('--no-sandbox')) args.push('--no-sandbox'); // root in CI containers
  return playwright.launch({ executablePath, args, headless: true });
}

export interface WatchedPage {
  page: Page;
  /** Console errors, uncaught exceptions and CSP violations seen so far. */
  problems: string[];
}

/**
 * A page that records console errors, page errors, CSP violations and failed requests (answers
 * of 400 and above), except requests whose URL `expectedFailures` matches (a test's own 401 or
 * 404). Chrome also logs each failed request as a console error without always naming its URL,
 * so those lines are left to the response check.
 */
export async function watchedPage(
  browser: Browser,
  expectedFailures?: RegExp,
  viewport = { width: 1440, height: 900 },
): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !expectedFailures?.test(response.url()))
      problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return { page, problems };
}

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the current page (WCAG 2 A and AA rules). */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (rightly) refuses injected scripts.
  await page.evaluate(axeSource);
  const result = (await page.evaluate(() =>
    (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<unknown> } }).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    }),
  )) as { violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown }> }> };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(', ')}`,
    );
}

/** Signs the page in to the console at `baseUrl` with a workspace key; resolves on the traces page. */
export async function signIn(page: Page, baseUrl: string, apiKey: string): Promise<void> {
  await page.goto(`${baseUrl}/sign-in`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/traces$/);
}
