import { calcPrice } from '@pydantic/genai-prices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type Tenant } from '../support/app.js';
import { get, post, span, trace } from './traces-fixtures.js';

/**
 * Workspace prices (/api/models): validation, priority over the built-in table, exact before
 * regex, validFrom, isolation between workspaces, the lookup, and what ingest makes of them.
 */

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const send = (tenant: Tenant, method: 'POST' | 'DELETE' | 'GET', url: string, payload?: unknown) =>
  ctx.app.inject({ method, url, headers: tenant.headers, ...(payload === undefined ? {} : { payload: payload as object }) });

const generation = (startTime: string, overrides: Record<string, unknown>) =>
  span({ kind: 'llm.chat', startTime, endTime: startTime, durationMs: 0, ...overrides });

async function spanOf(tenant: Tenant, fields: Record<string, unknown>, startTime = '2026-03-02T10:00:00.000Z') {
  const t = trace({ spans: [generation(startTime, { spanId: 'g', ...fields })] });
  expect((await post(ctx, tenant, [t])).json().data.accepted).toBe(1);
  return (await get(ctx, tenant, `/api/traces/${t.traceId}`)).json().data.spans[0];
}

describe('POST /api/models', () => {
  it('answers 400 with the path for bad prices, bad regexes and unknown fields', async () => {
    const tenant = await ctx.tenant();
    const base = { model: 'acme-1', matchType: 'exact', inputPerMillion: 1, outputPerMillion: 2 };
    const cases: Array<[unknown, string]> = [
      [{ ...base, inputPerMillion: -1 }, 'body.inputPerMillion'],
      [{ ...base, cacheReadPerMillion: -0.5 }, 'body.cacheReadPerMillion'],
      [{ ...base, matchType: 'glob' }, 'body.matchType'],
      [{ ...base, matchType: 'regex', model: 'acme-(' }, 'body.model'],
      // Backreferences and lookaround need backtracking: RE2 refuses them.
      [{ ...base, matchType: 'regex', model: '(a)\\1' }, 'body.model'],
      [{ ...base, matchType: 'regex', model: '(?=a)a' }, 'body.model'],
      [{ ...base, validFrom: 'tomorrow' }, 'body.validFrom'],
      [{ ...base, currency: 'EUR' }, 'currency'],
      [{ matchType: 'exact', inputPerMillion: 1, outputPerMillion: 1 }, 'body.model'],
    ];
    for (const [body, path] of cases) {
      const res = await send(tenant, 'POST', '/api/models', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      const issues: Array<{ path: string; message: string }> = res.json().error.details.issues;
      expect(
        issues.some((i) => i.path === path || (i.path === 'body' && i.message.includes(path))),
        JSON.stringify(issues),
      ).toBe(true);
    }
    expect((await send(tenant, 'GET', '/api/models')).json().data).toEqual([]);
  });

  it('creates, lists and deletes prices of the workspace only', async () => {
    const [a, b] = [await ctx.tenant(), await ctx.tenant()];
    const created = await send(a, 'POST', '/api/models', {
      model: 'acme-1',
      matchType: 'exact',
      provider: 'acme',
      inputPerMillion: 1,
      outputPerMillion: 2,
      cacheReadPerMillion: 0.1,
      validFrom: '2026-01-01T00:00:00+01:00',
    });
    expect(created.statusCode).toBe(201);
    const price = created.json().data;
    expect(price).toMatchObject({
      model: 'acme-1',
      matchType: 'exact',
      provider: 'acme',
      inputPerMillion: 1,
      outputPerMillion: 2,
      cacheReadPerMillion: 0.1,
      cacheWritePerMillion: null,
      validFrom: '2025-12-31T23:00:00.000Z',
    });
    expect((await send(a, 'GET', '/api/models')).json().data).toEqual([price]);
    expect((await send(b, 'GET', '/api/models')).json().data).toEqual([]);
    expect((await send(b, 'DELETE', `/api/models/${price.id}`)).statusCode).toBe(404);
    expect((await send(b, 'GET', '/api/models/price?model=acme-1&provider=acme')).statusCode).toBe(404);
    expect((await send(a, 'GET', '/api/models/price?model=acme-1&provider=acme')).json().data.pricing).toMatchObject({
      source: 'workspace',
      priceId: price.id,
    });
    expect((await send(a, 'DELETE', `/api/models/${price.id}`)).json().data).toEqual({ id: price.id, deleted: true });
    expect((await send(a, 'DELETE', `/api/models/${price.id}`)).statusCode).toBe(404);
    expect((await send(a, 'DELETE', '/api/models/not-a-uuid')).statusCode).toBe(400);
    expect((await send(a, 'GET', '/api/models')).json().data).toEqual([]);
    const unauthenticated = await ctx.app.inject({ method: 'GET', url: '/api/models' });
    expect(unauthenticated.statusCode).toBe(401);
  });
});

describe('which price applies', () => {
  it('prefers the workspace price to the built-in one, and never another workspace’s', async () => {
    const [a, b] = [await ctx.tenant(), await ctx.tenant()];
    const { id } = (
      await send(a, 'POST', '/api/models', {
        model: 'GPT-4o-mini',
        matchType: 'exact',
        provider: 'openai',
        inputPerMillion: 10,
        outputPerMillion: 20,
        cacheReadPerMillion: 1,
      })
    ).json().data;
    const fields = { model: 'gpt-4o-mini', provider: 'openai.chat', inputTokens: 3000, outputTokens: 500, cacheReadTokens: 1000 };
    const ours = await spanOf(a, fields);
    expect(ours.costUsd).toBeCloseTo((2000 * 10 + 1000 * 1 + 500 * 20) / 1e6, 15);
    expect(ours.pricing).toEqual({
      providerId: 'openai',
      modelId: 'GPT-4o-mini',
      inputPerMillion: 10,
      outputPerMillion: 20,
      cacheReadPerMillion: 1,
      source: 'workspace',
      priceId: id,
    });
    const theirs = await spanOf(b, fields);
    const builtin = calcPrice({ input_tokens: 3000, output_tokens: 500, cache_read_tokens: 1000 }, 'gpt-4o-mini', {
      providerId: 'openai',
      timestamp: new Date('2026-03-02T10:00:00Z'),
    })!;
    expect(theirs).toMatchObject({ costUsd: builtin.total_price, pricing: { source: 'builtin' } });
    // A price for another provider does not apply.
    expect((await spanOf(a, { ...fields, provider: 'azure' })).pricing.source).toBe('builtin');
    // The lookup says the same.
    expect((await send(a, 'GET', '/api/models/price?model=gpt-4o-mini&provider=openai')).json().data).toMatchObject({
      model: 'gpt-4o-mini',
      provider: 'openai',
      pricing: { source: 'workspace', priceId: id },
    });
    expect((await send(b, 'GET', '/api/models/price?model=gpt-4o-mini&provider=openai')).json().data.pricing).toMatchObject({
      source: 'builtin',
      modelId: 'gpt-4o-mini',
    });
    expect((await send(b, 'GET', '/api/models/price?model=acme-unknown')).statusCode).toBe(404);
    expect((await send(b, 'GET', '/api/models/price')).statusCode).toBe(400);
  });

  it('lets an exact name beat a regex, whatever their order, and runs regexes in linear time', async () => {
    const tenant = await ctx.tenant();
    const price = (body: object) =>
      send(tenant, 'POST', '/api/models', { inputPerMillion: 1, outputPerMillion: 1, ...body }).then((r) => r.json().data);
    const regex = await price({ model: 'acme-.*', matchType: 'regex', inputPerMillion: 2 });
    const exact = await price({ model: 'acme-large', matchType: 'exact', inputPerMillion: 3 });
    const newerRegex = await price({ model: 'acme-(large|huge)', matchType: 'regex', inputPerMillion: 4 });
    const fields = { provider: 'acme', inputTokens: 1_000_000, outputTokens: 0 };
    expect((await spanOf(tenant, { ...fields, model: 'acme-large' })).pricing.priceId).toBe(exact.id);
    // Among regexes the newest wins; a regex matches the whole name, case-insensitively.
    expect((await spanOf(tenant, { ...fields, model: 'ACME-huge' })).pricing.priceId).toBe(newerRegex.id);
    expect((await spanOf(tenant, { ...fields, model: 'acme-small' })).pricing.priceId).toBe(regex.id);
    expect((await spanOf(tenant, { ...fields, model: 'my-acme-small' })).costSource).toBe('none');
    // A pattern that backtracks exponentially elsewhere: accepted, and matching it is immediate.
    await price({ model: '(a+)+b', matchType: 'regex' });
    const started = performance.now();
    expect((await spanOf(tenant, { ...fields, model: `${'a'.repeat(200)}!` })).costSource).toBe('none');
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('respects validFrom: a span is priced by what was valid at its start', async () => {
    const tenant = await ctx.tenant();
    const price = (body: object) =>
      send(tenant, 'POST', '/api/models', { model: 'acme-timed', matchType: 'exact', outputPerMillion: 0, ...body }).then(
        (r) => r.json().data,
      );
    const early = await price({ inputPerMillion: 1 });
    const june = await price({ inputPerMillion: 2, validFrom: '2026-06-01T00:00:00Z' });
    const future = await price({ inputPerMillion: 3, validFrom: '2099-01-01T00:00:00Z' });
    const fields = { model: 'acme-timed', inputTokens: 1_000_000, outputTokens: 0 };
    expect(await spanOf(tenant, fields, '2026-05-31T23:59:59.000Z')).toMatchObject({ costUsd: 1, pricing: { priceId: early.id } });
    expect(await spanOf(tenant, fields, '2026-06-01T00:00:00.000Z')).toMatchObject({ costUsd: 2, pricing: { priceId: june.id } });
    expect(await spanOf(tenant, fields, '2027-01-01T00:00:00.000Z')).toMatchObject({ costUsd: 2, pricing: { priceId: june.id } });
    // The lookup answers what applies now: the June price, not the future one.
    expect((await send(tenant, 'GET', '/api/models/price?model=acme-timed')).json().data.pricing.priceId).toBe(june.id);
    expect(future.id).toBeDefined();
  });

  it('applies a new price to the next ingest at once, and stops applying a deleted one', async () => {
    const tenant = await ctx.tenant();
    const fields = { model: 'acme-fresh', inputTokens: 1000, outputTokens: 1000 };
    expect((await spanOf(tenant, fields)).costSource).toBe('none');
    const { id } = (
      await send(tenant, 'POST', '/api/models', { model: 'acme-fresh', matchType: 'exact', inputPerMillion: 1, outputPerMillion: 1 })
    ).json().data;
    expect(await spanOf(tenant, fields)).toMatchObject({ costSource: 'computed', costUsd: 0.002 });
    await send(tenant, 'DELETE', `/api/models/${id}`);
    expect((await spanOf(tenant, fields)).costSource).toBe('none');
  });
});

describe('OpenAPI', () => {
  it('documents every /api/models route with its schemas and error responses', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const routes: Array<[string, string, string]> = [
      ['/api/models/', 'post', '201'],
      ['/api/models/', 'get', '200'],
      ['/api/models/{id}', 'delete', '200'],
      ['/api/models/price', 'get', '200'],
      ['/api/models/unpriced', 'get', '200'],
      ['/api/models/reprice', 'post', '200'],
    ];
    for (const [path, method, ok] of routes) {
      const operation = doc.paths[path]?.[method] ?? doc.paths[path.replace(/\/$/, '')]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining([ok, '400', '401', '403', '404']));
    }
    const post = doc.paths['/api/models/']?.post ?? doc.paths['/api/models'].post;
    expect(JSON.stringify(post.requestBody)).toContain('inputPerMillion');
  });
});
