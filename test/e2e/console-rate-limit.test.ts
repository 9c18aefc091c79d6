import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListeningService, type ListeningService } from './sdk-server.js';
import { launchBrowser, seriousA11yViolations, watchedPage } from '../support/browser.js';

/**
 * The 429 screen, from the service's own rate limiter: an organization created through the
 * admin API with a limit of a few requests a minute, its budget used up, then the console
 * loaded with its key. Nothing is intercepted: the browser sees the service's real answer.
 */
const shots = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
const perMinute = 5;
// A fixed clock: the test never crosses into the next minute's budget, and the wait the
// service announces is known.
const now = Date.UTC(2025, 5, 1, 12, 0, 20);
let service: ListeningService;
let browser: Browser;

beforeAll(async () => {
  service = await startListeningService({ rateLimits: { now: () => now } });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

async function admin(url: string, body: unknown) {
  const res = await fetch(`${service.baseUrl}/api/admin${url}`, {
    method: 'POST',
    headers: { 'x-admin-token': service.stores.config.LOUPE_ADMIN_TOKEN ?? '', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, url).toBe(201);
  return ((await res.json()) as { data: Record<string, string> }).data;
}

describe('the console when the organization is rate limited', () => {
  it('shows the 429 screen with the service message, the wait and the request id', async () => {
    const organization = await admin('/organizations', {
      name: 'tiny-plan',
      plan: 'enterprise',
      rateLimitPerMinute: perMinute,
      rateLimitPerDay: 1000,
    });
    const workspace = await admin(`/organizations/${organization.id}/workspaces`, { name: 'main' });
    const { key } = await admin('/api-keys', { scope: 'workspace', organizationId: organization.id, workspaceId: workspace.id });

    // Every answer of 400 and above is expected to be a 429 here: checked below, not hidden.
    const { page, problems } = await watchedPage(browser, /\/api\//);
    const refused: string[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/api/') && response.status() >= 400)
        refused.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });

    // Signing in and the first list are within the budget.
    await page.goto(`${service.baseUrl}/sign-in`);
    await page.getByLabel('API key').fill(key!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/traces$/);
    await page.getByRole('heading', { name: 'No traces yet' }).waitFor();
    expect(refused).toEqual([]);

    // The rest of the minute's budget, used from outside the browser.
    let status = 200;
    for (let i = 0; i < perMinute && status !== 429; i++) {
      status = (await fetch(`${service.baseUrl}/api/me`, { headers: { 'x-api-key': key! } })).status;
    }
    expect(status).toBe(429);

    const answer = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/traces/' && r.status() === 429);
    await page.reload();
    const response = await answer;
    const body = (await response.json()) as { error: { code: string; message: string }; meta: { requestId: string } };
    expect(body.error.code).toBe('RATE_LIMITED');
    expect(response.headers()['retry-after']).toBe('40');

    const alert = page.getByRole('alert');
    await alert.getByRole('heading', { name: 'Too many requests' }).waitFor();
    const text = await alert.textContent();
    expect(text).toContain('429 · RATE_LIMITED');
    expect(text).toContain(`The organization's minute limit of ${perMinute} requests is used up; retry in 40 s`);
    expect(text).toContain("The organization's rate limit was reached. Try again in 40 s.");
    expect(text).toContain(`Request id ${body.meta.requestId}`);
    expect(await alert.locator('code').textContent()).toBe(body.meta.requestId);

    await page.screenshot({ path: path.join(shots, 'rate-limited.png') });
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.startsWith('429 '))).toBe(true);
  });
});
