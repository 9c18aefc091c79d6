import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { createTestContext, type TestContext } from '../support/app.js';

let ctx: TestContext;
const ids = { orgA: '', orgB: '', a1: '', a2: '', b1: '', userU: '', userV: '' };
const keys = { workspace: '', organization: '', userU: '', userV: '' };
const unknownUuid = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  ctx = await createTestContext();
  const { sql } = ctx;
  const orgA = await tenancy.createOrganization(sql, { name: 'org-a', plan: 'pro' });
  const orgB = await tenancy.createOrganization(sql, { name: 'org-b', plan: 'free' });
  ids.orgA = orgA.id;
  ids.orgB = orgB.id;
  ids.a1 = (await tenancy.createWorkspace(sql, orgA.id, 'a1')).id;
  ids.a2 = (await tenancy.createWorkspace(sql, orgA.id, 'a2')).id;
  ids.b1 = (await tenancy.createWorkspace(sql, orgB.id, 'b1')).id;
  ids.userU = (await tenancy.createUser(sql, 'u@example.com')).id;
  ids.userV = (await tenancy.createUser(sql, 'v@example.com')).id;
  await tenancy.addMember(sql, orgA.id, ids.userU);
  await tenancy.addMember(sql, orgA.id, ids.userV);
  await tenancy.addMember(sql, orgB.id, ids.userV);
  keys.workspace = (await tenancy.createApiKey(sql, { scope: 'workspace', organizationId: orgA.id, workspaceId: ids.a1 })).key;
  keys.organization = (await tenancy.createApiKey(sql, { scope: 'organization', organizationId: orgA.id })).key;
  keys.userU = (await tenancy.createApiKey(sql, { scope: 'user', organizationId: orgA.id, userId: ids.userU })).key;
  keys.userV = (await tenancy.createApiKey(sql, { scope: 'user', organizationId: orgA.id, userId: ids.userV })).key;
});
afterAll(async () => {
  await ctx?.close();
});

const me = (headers: Record<string, string>) => ctx.app.inject({ method: 'GET', url: '/api/me', headers });

type Case = [name: string, key: keyof typeof keys, org: string | null, ws: string | null, status: number, workspace?: string];
// `org`/`ws` name entries of `ids` (or a literal for malformed and unknown values); null omits the header.
const matrix: Case[] = [
  ['workspace key, no header', 'workspace', null, null, 200, 'a1'],
  ['workspace key, own workspace', 'workspace', null, 'a1', 200, 'a1'],
  ['workspace key, own workspace and organization', 'workspace', 'orgA', 'a1', 200, 'a1'],
  ['workspace key, other workspace of its organization', 'workspace', null, 'a2', 403],
  ['workspace key, workspace of another organization', 'workspace', null, 'b1', 403],
  ['workspace key, another organization', 'workspace', 'orgB', null, 403],
  ['workspace key, malformed workspace id', 'workspace', null, 'not-a-uuid', 400],
  ['organization key, no header', 'organization', null, null, 400],
  ['organization key, only organization header', 'organization', 'orgA', null, 400],
  ['organization key, its workspace a1', 'organization', null, 'a1', 200, 'a1'],
  ['organization key, its workspace a2', 'organization', 'orgA', 'a2', 200, 'a2'],
  ['organization key, workspace of another organization', 'organization', null, 'b1', 403],
  ['organization key, another organization header', 'organization', 'orgB', 'b1', 403],
  ['organization key, own workspace but another organization header', 'organization', 'orgB', 'a1', 403],
  ['organization key, unknown workspace', 'organization', null, unknownUuid, 403],
  ['organization key, malformed workspace id', 'organization', null, 'x', 400],
  ['user key, no header', 'userU', null, null, 400],
  ['user key, only workspace', 'userU', null, 'a1', 400],
  ['user key, only organization', 'userU', 'orgA', null, 400],
  ['user key, own organization and workspace a1', 'userU', 'orgA', 'a1', 200, 'a1'],
  ['user key, own organization and workspace a2', 'userU', 'orgA', 'a2', 200, 'a2'],
  ['user key, own organization, workspace of another', 'userU', 'orgA', 'b1', 403],
  ['user key, organization the user is not in', 'userU', 'orgB', 'b1', 403],
  ['user key, organization not in, own workspace', 'userU', 'orgB', 'a1', 403],
  ['user key, unknown organization', 'userU', unknownUuid, 'a1', 403],
  ['user key, malformed organization id', 'userU', 'nope', 'a1', 400],
  // V belongs to both organizations, but the key was issued in A and reaches only A.
  ['user key of a member of two organizations, the other one', 'userV', 'orgB', 'b1', 403],
  ['user key of a member of two organizations, its own', 'userV', 'orgA', 'a2', 200, 'a2'],
];

describe('API key scope matrix on GET /api/me', () => {
  it.each(matrix)('%s (key %s, org %s, workspace %s) → %i', async (_name, key, org, ws, status, workspace) => {
    const value = (v: string) => (v in ids ? ids[v as keyof typeof ids] : v);
    const headers: Record<string, string> = { 'x-api-key': keys[key] };
    if (org !== null) headers['x-organization-id'] = value(org);
    if (ws !== null) headers['x-workspace-id'] = value(ws);
    const res = await me(headers);
    expect(res.statusCode, res.body).toBe(status);
    // Whatever the outcome, the key never comes back.
    expect(res.body).not.toContain(keys[key]);
    if (status === 200) {
      expect(res.json().data.workspaceId).toBe(ids[workspace as keyof typeof ids]);
    } else {
      const code = { 400: 'VALIDATION_ERROR', 403: 'FORBIDDEN' }[status];
      expect(res.json().error.code).toBe(code);
    }
    if (status === 400) expect(res.json().error.details.issues[0].path).toMatch(/^headers\.x-(workspace|organization)-id$/);
  });

  it('answers the principal of each scope', async () => {
    const org = await me({ 'x-api-key': keys.organization, 'x-workspace-id': ids.a1 });
    expect(org.json().data).toMatchObject({ organizationId: ids.orgA, plan: 'pro', principal: { kind: 'apiKey', scope: 'organization' } });
    const user = await me({ 'x-api-key': keys.userU, 'x-organization-id': ids.orgA, 'x-workspace-id': ids.a1 });
    expect(user.json().data.principal).toEqual({ kind: 'apiKey', scope: 'user', userId: ids.userU });
  });

  it('accepts upper-case ids in headers', async () => {
    const res = await me({ 'x-api-key': keys.organization, 'x-workspace-id': ids.a2.toUpperCase() });
    expect(res.json().data.workspaceId).toBe(ids.a2);
  });

  it('stops a user key once the user leaves the organization', async () => {
    const user = await tenancy.createUser(ctx.sql, 'leaver@example.com');
    await tenancy.addMember(ctx.sql, ids.orgA, user.id);
    const { key } = await tenancy.createApiKey(ctx.sql, { scope: 'user', organizationId: ids.orgA, userId: user.id });
    const headers = { 'x-api-key': key, 'x-organization-id': ids.orgA, 'x-workspace-id': ids.a1 };
    expect((await me(headers)).statusCode).toBe(200);
    await ctx.sql`delete from memberships where user_id = ${user.id}`;
    expect((await me(headers)).statusCode).toBe(403);
  });
});

describe('unknown, wrong and revoked keys', () => {
  it('answers 401 without credentials, for an unknown key and for a known prefix with a wrong secret', async () => {
    const none = await me({});
    expect(none.statusCode).toBe(401);
    expect(none.json().error.details.reason).toBe('missing_credentials');
    for (const key of ['lpk_000000000000_unknown', `${keys.workspace.slice(0, 16)}${'A'.repeat(40)}`, keys.workspace.slice(0, -1)]) {
      const res = await me({ 'x-api-key': key });
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'invalid_api_key' } });
      expect(res.body).not.toContain(key);
    }
  });

  it('answers 401 once a key is revoked through the admin API, and only hashes are stored', async () => {
    const tenant = await ctx.tenant();
    expect((await me(tenant.headers)).statusCode).toBe(200);
    const [row] = await ctx.sql<{ id: string; hash: Buffer; prefix: string }[]>`
      select id, hash, prefix from api_keys where workspace_id = ${tenant.workspaceId}`;
    expect(row!.hash.toString('utf8')).not.toContain(tenant.key);
    expect(tenant.key.startsWith(row!.prefix)).toBe(true);
    const revoked = await ctx.app.inject({ method: 'DELETE', url: `/api/admin/api-keys/${row!.id}`, headers: ctx.adminHeaders });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.body).not.toContain(tenant.key);
    const res = await me(tenant.headers);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.details.reason).toBe('invalid_api_key');
  });

  it('rejects a malformed Authorization header and bearer tokens when OAuth is not configured', async () => {
    const basic = await me({ authorization: 'Basic dXNlcjpwYXNz' });
    expect(basic.json().error.details.reason).toBe('malformed_authorization');
    const bearer = await me({ authorization: 'Bearer abc.def.ghi' });
    expect(bearer.statusCode).toBe(401);
    expect(bearer.json().error.details.reason).toBe('oauth_not_configured');
    expect(bearer.body).not.toContain('abc.def.ghi');
  });
});

describe('security headers', () => {
  it('are on successes, errors, unknown routes and admin answers', async () => {
    const answers = await Promise.all([
      me({ 'x-api-key': keys.workspace }),
      me({ 'x-api-key': 'wrong-key-000000000000' }),
      ctx.app.inject({ method: 'GET', url: '/nowhere' }),
      ctx.app.inject({ method: 'GET', url: '/healthz' }),
      ctx.app.inject({ method: 'GET', url: '/api/admin/api-keys', query: { organizationId: ids.orgA } }),
    ]);
    for (const res of answers) {
      expect(res.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
        'cache-control': 'no-store',
        'x-request-id': expect.any(String),
      });
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });
});

describe('logs', () => {
  it('never carry the key, the bearer token or the admin token', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const { secretLogPaths } = await import('../../src/app.js');
    const log = pino({ level: 'trace', redact: secretLogPaths, serializers: { req: (req) => ({ headers: req.headers }) } }, sink);
    const app = await buildApp({ config: ctx.config, sql: ctx.sql, clickhouse: ctx.clickhouse, log });
    try {
      await app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': keys.workspace } });
      await app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': `${keys.workspace}x` } });
      await app.inject({ method: 'GET', url: '/api/me', headers: { authorization: 'Bearer secret.token.value' } });
      await app.inject({ method: 'GET', url: '/api/admin/api-keys', headers: { 'x-admin-token': 'wrong-admin-token-123' } });
    } finally {
      await app.close();
    }
    const text = lines.join('');
    expect(text).toContain('[Redacted]');
    for (const secret of [keys.workspace, 'secret.token.value', 'wrong-admin-token-123']) expect(text).not.toContain(secret);
  });
});
