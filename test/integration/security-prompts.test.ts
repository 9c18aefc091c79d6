import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

let ctx: TestContext;
let owner: Tenant;
/** Another organization. */
let stranger: Tenant;
/** An organization key of the owner's organization, pointed at its second workspace. */
let sibling: Tenant;
let promptId: number;
const secretText = 'owner-only system prompt {topic}';

beforeAll(async () => {
  ctx = await createTestContext();
  owner = await ctx.tenant();
  stranger = await ctx.tenant();
  const second = await tenancy.createWorkspace(ctx.sql, owner.organizationId, 'second');
  const { key } = await tenancy.createApiKey(ctx.sql, { scope: 'organization', organizationId: owner.organizationId });
  sibling = {
    organizationId: owner.organizationId,
    workspaceId: second.id,
    key,
    headers: { 'x-api-key': key, 'x-workspace-id': second.id },
  };
  const created = await send(owner, 'POST', '/api/prompt', { name: 'shared-name', systemPrompt: secretText });
  expect(created.statusCode, created.body).toBe(201);
  promptId = created.json().data.id;
  for (const other of [stranger, sibling]) {
    const res = await send(other, 'POST', '/api/prompt', { name: 'shared-name', systemPrompt: 'their own' });
    expect(res.statusCode, res.body).toBe(201);
  }
});
afterAll(async () => {
  await ctx?.close();
});

function send(who: Tenant, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) {
  return ctx.app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) });
}

async function ownerVersions() {
  const res = await send(owner, 'GET', '/api/prompt?name=shared-name');
  return res.json().data as Array<{ id: number; version: string; isLatest: boolean; systemPrompt: string }>;
}

const attempts = () =>
  [
    ['read', 'GET', `/api/prompt/${promptId}`, undefined],
    [
      'add a version',
      'POST',
      `/api/prompt/${promptId}/versions`,
      { newVersion: '9.0.0', changes: { systemPrompt: 'hijacked', isLatest: true } },
    ],
    ['update', 'PATCH', `/api/prompt/${promptId}`, { systemPrompt: 'hijacked' }],
    ['render', 'POST', `/api/prompt/${promptId}/render`, { variables: { topic: 'x' } }],
    ['delete', 'DELETE', `/api/prompt/${promptId}`, undefined],
  ] as const;

describe.each([
  ['another organization', () => stranger],
  ['another workspace of the same organization', () => sibling],
])('a prompt seen from %s', (_who, who) => {
  it.each(attempts().map((a) => [a[0], a] as const))('cannot %s it: 404, nothing revealed, nothing changed', async (_name, attempt) => {
    const [, method, url, payload] = attempts().find((a) => a[0] === attempt[0])!;
    const res = await send(who(), method, url, payload);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().error.code).toBe('NOT_FOUND');
    expect(res.body).not.toContain('owner-only');
    const versions = await ownerVersions();
    expect(versions.map((v) => [v.version, v.isLatest, v.systemPrompt])).toEqual([['1.0.0', true, secretText]]);
  });

  it('is not listed, even under its name or with isLatest', async () => {
    for (const query of ['', '?name=shared-name', '?isLatest=true', '?limit=200']) {
      const res = await send(who(), 'GET', `/api/prompt${query}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((p: { id: number }) => p.id)).not.toContain(promptId);
      expect(res.body).not.toContain('owner-only');
    }
  });
});

describe('the owner', () => {
  it('keeps its own latest version although others made prompts of the same name', async () => {
    const [own] = await ownerVersions();
    expect(own).toMatchObject({ id: promptId, isLatest: true });
  });

  it('reaches the prompt through an organization key pointed at its workspace, not through a workspace header on another key', async () => {
    const orgKey = { ...sibling, headers: { 'x-api-key': sibling.key, 'x-workspace-id': owner.workspaceId } };
    expect((await send(orgKey, 'GET', `/api/prompt/${promptId}`)).statusCode).toBe(200);
    const redirected = { ...stranger, headers: { ...stranger.headers, 'x-workspace-id': owner.workspaceId } };
    expect((await send(redirected, 'GET', `/api/prompt/${promptId}`)).statusCode).toBe(403);
  });
});
