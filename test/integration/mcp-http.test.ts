import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { selfCallHeader } from '../../src/http/requests/self-calls.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

/**
 * POST /mcp as a route of the service: the same credentials as the REST API (workspace,
 * organization and user keys, 401 without one), the rate limit counted once per MCP request,
 * the console and /mcp never shadowing each other, and bad requests answered in the envelope.
 */

// Mid-minute, so a test's requests fall in one window.
const clock = Date.UTC(2031, 4, 6, 12, 0, 5);
let ctx: TestContext;
let a: Tenant;
let baseUrl: string;

const accept = { accept: 'application/json, text/event-stream' };
const rpc = (method: string, params?: object, id = 1) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const post = (headers: Record<string, string>, payload: unknown) =>
  ctx.app.inject({ method: 'POST', url: '/mcp', headers: { ...accept, ...headers }, payload: payload as object });

beforeAll(async () => {
  ctx = await createTestContext({ rateLimits: { now: () => clock } });
  a = await ctx.tenant();
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/traces',
    headers: a.headers,
    payload: {
      traces: [
        {
          traceId: 'mine',
          source: 'sdk',
          spans: [
            {
              spanId: 'root',
              name: 'root',
              kind: 'agent',
              status: 'ok',
              startTime: new Date(Date.now() - 60_000).toISOString(),
              endTime: new Date(Date.now() - 59_995).toISOString(),
              durationMs: 5,
            },
          ],
        },
      ],
    },
  });
  expect(res.json<{ data: { accepted: number } }>().data.accepted, res.body).toBe(1);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const address = ctx.app.server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await ctx?.close();
});

async function connect(headers: Record<string, string>) {
  const client = new Client({ name: 'loupe-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers } }));
  return client;
}

describe('POST /mcp authentication', () => {
  it('answers 401 in the envelope without a credential or with a wrong one', async () => {
    const credentials: Array<Record<string, string>> = [{}, { 'x-api-key': 'lpk_000000000000_wrong' }, { authorization: 'Bearer nope' }];
    for (const headers of credentials) {
      const res = await post(headers, rpc('tools/list'));
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' }, meta: { requestId: expect.any(String) } });
    }
    await expect(connect({})).rejects.toThrow(/401|Unauthorized/i);
  });

  it('takes organization keys with x-workspace-id, within their organization only', async () => {
    const orgKey = await tenancy.createApiKey(ctx.sql, { scope: 'organization', organizationId: a.organizationId });
    const client = await connect({ 'x-api-key': orgKey.key, 'x-workspace-id': a.workspaceId });
    try {
      const result = await client.callTool({ name: 'get_trace', arguments: { traceId: 'mine' } });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/^Trace \{"traceId":"mine"/);
    } finally {
      await client.close();
    }
    const other = await ctx.tenant();
    const outside = await post({ 'x-api-key': orgKey.key, 'x-workspace-id': other.workspaceId }, rpc('tools/list'));
    expect(outside.statusCode).toBe(403);
    expect(outside.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    const missing = await post({ 'x-api-key': orgKey.key }, rpc('tools/list'));
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({
      error: { code: 'VALIDATION_ERROR', details: { issues: [{ path: 'headers.x-workspace-id' }] } },
    });
  });

  it("reads with the caller's workspace only: another workspace's key never sees this trace", async () => {
    const other = await ctx.tenant();
    const res = await post(other.headers, rpc('tools/call', { name: 'get_trace', arguments: { traceId: 'mine' } }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { isError: true, content: [{ type: 'text', text: expect.stringMatching(/^NOT_FOUND: /) }] },
    });
  });
});

describe('POST /mcp rate limits', () => {
  it('counts one MCP request once, tool reads included; over the limit it answers 429', async () => {
    const free = await ctx.tenant({ plan: 'free' });
    const list = await post(free.headers, rpc('tools/list'));
    expect(list.statusCode).toBe(200);
    expect(list.headers).toMatchObject({ 'ratelimit-limit': '60', 'ratelimit-remaining': '59' });
    const call = await post(free.headers, rpc('tools/call', { name: 'get_trace', arguments: { traceId: 'none' } }));
    expect(call.json()).toMatchObject({ result: { isError: true } });
    expect(call.headers['ratelimit-remaining']).toBe('58');
    // render_prompt makes two reads; the request still counts once.
    await post(free.headers, rpc('tools/call', { name: 'render_prompt', arguments: { name: 'none' } }));
    const after = await post(free.headers, rpc('tools/list'));
    expect(after.headers['ratelimit-remaining']).toBe('56');
    // A client cannot pass for an in-process read.
    const forged = await post({ ...free.headers, [selfCallHeader]: 'AAAA' }, rpc('tools/list'));
    expect(forged.headers['ratelimit-remaining']).toBe('55');
    for (let i = 0; i < 55; i++) expect((await post(free.headers, rpc('tools/list'))).statusCode).toBe(200);
    const limited = await post(free.headers, rpc('tools/list'));
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect(limited.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
  });
});

describe('/mcp beside the console and the protocol', () => {
  it('GET and DELETE /mcp answer 405 (stateless: no event stream, no session), never the console', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await ctx.app.inject({ method, url: '/mcp', headers: { ...a.headers, accept: 'text/event-stream' } });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/mcp' })).statusCode).toBe(401);
    const page = await ctx.app.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
  });

  it('answers bad requests in the envelope, and the transport refusals as JSON-RPC errors', async () => {
    const empty = await post(a.headers, []);
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    const unknown = await post(a.headers, { ...rpc('tools/list'), extra: 1 });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: { issues: [{ path: 'body' }] } } });
    const noAccept = await ctx.app.inject({ method: 'POST', url: '/mcp', headers: a.headers, payload: rpc('tools/list') });
    expect(noAccept.statusCode).toBe(406);
    expect(noAccept.json()).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/^Not Acceptable/) } });
    const notification = await post(a.headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.statusCode).toBe(202);
    expect(notification.body).toBe('');
  });

  it('answers a batch, with the security headers and the request id of every route', async () => {
    const res = await post({ ...a.headers, 'x-request-id': 'mcp-batch-1' }, [rpc('tools/list', undefined, 1), rpc('ping', undefined, 2)]);
    expect(res.statusCode).toBe(200);
    const answers = res.json<Array<{ id: number; result: { tools?: unknown[] } }>>();
    expect(answers.map((r) => r.id).sort()).toEqual([1, 2]);
    expect(answers.find((r) => r.id === 1)!.result.tools).toHaveLength(16);
    expect(res.headers).toMatchObject({ 'x-request-id': 'mcp-batch-1', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
  });
});
