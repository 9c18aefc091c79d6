import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

let ctx: TestContext;
let owner: Tenant;
let stranger: Tenant;
let prompt: Record<string, any>;

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await ctx.tenant();
  stranger = await ctx.tenant();
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/prompt',
    headers: owner.headers,
    payload: { name: 'private', systemPrompt: 'Secret {x}', humanPrompt: 'h' },
  });
  prompt = res.json().data;
});
afterAll(async () => {
  await ctx?.close();
});

const as = (tenant: Tenant, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
  ctx.app.inject({ method, url, headers: tenant.headers, ...(payload ? { payload } : {}) });

describe('another workspace cannot reach a prompt', () => {
  it('read, version, patch, render and delete answer 404', async () => {
    const attempts = [
      as(stranger, 'GET', `/api/prompt/${prompt.id}`),
      as(stranger, 'POST', `/api/prompt/${prompt.id}/versions`, { newVersion: '9.0.0', changes: { isLatest: true } }),
      as(stranger, 'PATCH', `/api/prompt/${prompt.id}`, { systemPrompt: 'taken over' }),
      as(stranger, 'POST', `/api/prompt/${prompt.id}/render`, { variables: { x: 1 } }),
      as(stranger, 'DELETE', `/api/prompt/${prompt.id}`),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', details: { id: prompt.id } });
      expect(res.body).not.toContain('Secret');
    }
  });

  it('lists nothing of it, by name or otherwise', async () => {
    for (const url of ['/api/prompt', '/api/prompt?name=private', '/api/prompt?isLatest=true']) {
      const res = await as(stranger, 'GET', url);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ data: [], meta: { pagination: { total: 0, hasMore: false } } });
    }
  });

  it('left the owner’s prompt untouched', async () => {
    const res = await as(owner, 'GET', '/api/prompt?name=private');
    expect(res.json().data).toEqual([prompt]);
    expect((await as(owner, 'POST', `/api/prompt/${prompt.id}/render`, { variables: { x: 1 } })).json().data.systemPrompt).toBe('Secret 1');
  });

  it('a request without a credential gets 401 before anything is read', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: `/api/prompt/${prompt.id}` });
    expect(res.statusCode).toBe(401);
  });

  it('deleting a workspace removes its prompts', async () => {
    const doomed = await ctx.tenant();
    await as(doomed, 'POST', '/api/prompt', { name: 'gone-with-it', systemPrompt: 's' });
    await ctx.sql`delete from workspaces where id = ${doomed.workspaceId}`;
    const [row] = await ctx.sql<{ n: string }[]>`select count(*) as n from prompt_groups where workspace_id = ${doomed.workspaceId}`;
    expect(Number(row!.n)).toBe(0);
  });
});
