import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestContext, type TestContext } from '../support/app.js';

// A stand-in build: the serving rules do not depend on what the bundle contains.
const dist = mkdtempSync(path.join(tmpdir(), 'loupe-console-'));
mkdirSync(path.join(dist, 'assets'));
writeFileSync(
  path.join(dist, 'index.html'),
  '<!doctype html><title>Loupe</title><script type="module" src="/assets/index-abc123.js"></script>',
);
writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), 'console.log("console")');
writeFileSync(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ deps: { consoleDir: dist } });
});
afterAll(async () => {
  await ctx?.close();
  rmSync(dist, { recursive: true, force: true });
});

describe('the console is served beside the API', () => {
  it('answers index.html for its client routes, never cached, under a CSP without inline scripts', async () => {
    for (const url of [
      '/',
      '/traces',
      '/traces/abc?span=s1',
      '/dashboard',
      '/prompts/support-agent',
      '/sessions/x',
      '/users/u',
      '/sign-in',
    ]) {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/text\/html/);
      expect(res.body).toContain('<title>Loupe</title>');
      expect(res.headers['cache-control']).toBe('no-cache');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
  });

  it('serves hashed assets with a year of immutable cache, and 404 JSON for a missing one', async () => {
    const asset = await ctx.app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const missing = await ctx.app.inject({ method: 'GET', url: '/assets/nope.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['cache-control']).toBe('no-store');
    const escape = await ctx.app.inject({ method: 'GET', url: '/assets/..%2f..%2fpackage.json' });
    expect([400, 403, 404]).toContain(escape.statusCode);
    expect(escape.body).not.toContain('"dependencies"');
  });

  it('never shadows the API, health, docs, the MCP endpoint or the OpenAPI document', async () => {
    const unknown = await ctx.app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    expect(unknown.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    const me = await ctx.app.inject({ method: 'GET', url: '/api/me' });
    expect(me.statusCode).toBe(401);
    for (const method of ['GET', 'POST'] as const) {
      const mcp = await ctx.app.inject({ method, url: '/mcp' });
      expect(mcp.statusCode).toBe(401);
      expect(mcp.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/healthz' })).json()).toMatchObject({ data: { status: 'ok' } });
    const openapi = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(openapi.json()).toMatchObject({ openapi: '3.1.0' });
    // The console's types are generated from this document: every $ref in it must resolve.
    const components = Object.keys(openapi.json().components?.schemas ?? {});
    const refs = [...openapi.body.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.filter((name) => !components.includes(name!))).toEqual([]);
    expect(JSON.stringify(openapi.json().paths)).not.toContain('/assets');
    const docs = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger');
    const other = await ctx.app.inject({ method: 'GET', url: '/not-a-console-page' });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
