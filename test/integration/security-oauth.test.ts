import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { createOAuthVerifier } from '../../src/tenancy/service/oauth.js';
import { createTestContext, type TestContext } from '../support/app.js';

const issuer = 'https://issuer.test';
const audience = 'loupe-api';

/** The issuer's key set, served on loopback; tests add keys to it to rotate. */
const published: JWK[] = [];
let jwksFetches = 0;
let jwksServer: Server;
let jwksUrl: string;
let ctx: TestContext;
const signing: Record<string, { key: CryptoKey; alg: string }> = {};
const ids = { org: '', ws: '', otherOrg: '', otherWs: '', user: '' };

async function addKey(kid: string, alg: 'RS256' | 'ES256', publish = true) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  signing[kid] = { key: privateKey, alg };
  if (publish) published.push({ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' });
  return publicKey;
}

function token(options: { kid?: string; sub?: string | null; iss?: string; aud?: string; exp?: number; nbf?: number } = {}) {
  const kid = options.kid ?? 'k1';
  const { key, alg } = signing[kid]!;
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg, kid })
    .setIssuer(options.iss ?? issuer)
    .setAudience(options.aud ?? audience);
  if (options.sub !== null) jwt.setSubject(options.sub ?? 'subject-1');
  jwt.setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 600);
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(key);
}

const me = (bearer: string, headers: Record<string, string> = { 'x-organization-id': ids.org, 'x-workspace-id': ids.ws }) =>
  ctx.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${bearer}`, ...headers } });

async function expectRejected(bearer: string, reason: string) {
  const res = await me(bearer);
  expect(res.statusCode, res.body).toBe(401);
  expect(res.json().error).toMatchObject({ code: 'UNAUTHORIZED', details: { reason } });
  expect(res.body).not.toContain(bearer);
}

beforeAll(async () => {
  await addKey('k1', 'RS256');
  await addKey('k2', 'ES256');
  jwksServer = createServer((req, res) => {
    jwksFetches += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;

  ctx = await createTestContext({ env: { LOUPE_OAUTH_JWKS_URL: jwksUrl, LOUPE_OAUTH_ISSUER: issuer, LOUPE_OAUTH_AUDIENCE: audience } });
  // Rebuilt with the verifier: the default context has none. No refetch cooldown, so rotation is seen at once.
  await ctx.app.close();
  ctx.app = await buildApp({
    config: ctx.config,
    sql: ctx.sql,
    clickhouse: ctx.clickhouse,
    verifyBearer: createOAuthVerifier(ctx.sql, { jwksUrl, issuer, audience, refetchCooldownMs: 0 }),
  });
  const tenant = await ctx.tenant();
  const other = await ctx.tenant();
  Object.assign(ids, { org: tenant.organizationId, ws: tenant.workspaceId, otherOrg: other.organizationId, otherWs: other.workspaceId });
  ids.user = (await tenancy.createUser(ctx.sql, 'oauth@example.com')).id;
  await tenancy.addMember(ctx.sql, ids.org, ids.user);
  const linked = await ctx.app.inject({
    method: 'PATCH',
    url: `/api/admin/users/${ids.user}`,
    headers: ctx.adminHeaders,
    payload: { externalSubject: 'subject-1' },
  });
  expect(linked.statusCode, linked.body).toBe(200);
  expect(linked.json().data.externalSubject).toBe('subject-1');
});
afterAll(async () => {
  await ctx?.app.close(); // the rebuilt app; close() below ends the stores
  await ctx?.close();
  await new Promise((resolve) => jwksServer?.close(resolve));
});

describe('OAuth bearer tokens', () => {
  it('resolve the user of `sub` to the workspace named by the headers (RS256 and ES256)', async () => {
    for (const kid of ['k1', 'k2']) {
      const res = await me(await token({ kid }));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        workspaceId: ids.ws,
        organizationId: ids.org,
        principal: { kind: 'oauth', userId: ids.user },
      });
    }
  });

  it('fetch the key set once and reuse it', async () => {
    const before = jwksFetches;
    for (let i = 0; i < 5; i += 1) expect((await me(await token())).statusCode).toBe(200);
    expect(jwksFetches).toBe(before);
  });

  it('follow the user rules: both headers required, only the user organizations and their workspaces', async () => {
    const bearer = await token();
    expect((await me(bearer, {})).statusCode).toBe(400);
    expect((await me(bearer, { 'x-workspace-id': ids.ws })).statusCode).toBe(400);
    expect((await me(bearer, { 'x-organization-id': ids.otherOrg, 'x-workspace-id': ids.otherWs })).statusCode).toBe(403);
    expect((await me(bearer, { 'x-organization-id': ids.org, 'x-workspace-id': ids.otherWs })).statusCode).toBe(403);
  });

  it('reject expired and not-yet-valid tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRejected(await token({ exp: now - 3600 }), 'token_expired');
    await expectRejected(await token({ nbf: now + 3600, exp: now + 7200 }), 'token_not_yet_valid');
  });

  it('reject another issuer or audience', async () => {
    await expectRejected(await token({ iss: 'https://evil.test' }), 'invalid_issuer');
    await expectRejected(await token({ aud: 'another-api' }), 'invalid_audience');
  });

  it('reject a bad signature, a key outside the key set and garbage', async () => {
    // Signed by a key of its own under a published kid.
    await addKey('forged', 'RS256', false);
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('subject-1')
      .setIssuer(issuer)
      .setAudience(audience)
      .setExpirationTime('10m')
      .sign(signing.forged!.key);
    await expectRejected(forged, 'invalid_signature');
    await expectRejected(await token({ kid: 'forged' }), 'unknown_signing_key');
    await expectRejected('not.a.jwt', 'malformed_token');
  });

  it('reject `alg: none` and symmetric algorithms', async () => {
    const unsigned = new UnsecuredJWT({ sub: 'subject-1' }).setIssuer(issuer).setAudience(audience).setExpirationTime('10m').encode();
    await expectRejected(unsigned, 'unsupported_algorithm');
    // The classic confusion: the public key material used as an HMAC secret.
    const secret = new TextEncoder().encode(JSON.stringify(published[0]));
    const hmac = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setSubject('subject-1')
      .setIssuer(issuer)
      .setAudience(audience)
      .setExpirationTime('10m')
      .sign(secret);
    await expectRejected(hmac, 'unsupported_algorithm');
  });

  it('reject an unknown subject, a missing subject, and a subject unlinked through the admin API', async () => {
    await expectRejected(await token({ sub: 'nobody' }), 'unknown_subject');
    await expectRejected(await token({ sub: null }), 'missing_claim');
    const user = await tenancy.createUser(ctx.sql, 'unlinked@example.com', 'subject-2');
    await tenancy.addMember(ctx.sql, ids.org, user.id);
    expect((await me(await token({ sub: 'subject-2' }))).statusCode).toBe(200);
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: `/api/admin/users/${user.id}`,
      headers: ctx.adminHeaders,
      payload: { externalSubject: null },
    });
    expect(res.json().data.externalSubject).toBeNull();
    await expectRejected(await token({ sub: 'subject-2' }), 'unknown_subject');
  });

  it('pick up a rotated key as soon as its kid appears in the key set', async () => {
    const publicKey = await addKey('k3', 'ES256', false);
    const rotated = await token({ kid: 'k3' });
    await expectRejected(rotated, 'unknown_signing_key');
    const before = jwksFetches;
    published.push({ ...(await exportJWK(publicKey)), kid: 'k3', alg: 'ES256', use: 'sig' });
    const res = await me(rotated);
    expect(res.statusCode, res.body).toBe(200);
    expect(jwksFetches).toBe(before + 1);
  });

  it('answer 503 when the key set cannot be fetched', async () => {
    const app = await buildApp({
      config: ctx.config,
      sql: ctx.sql,
      clickhouse: ctx.clickhouse,
      verifyBearer: createOAuthVerifier(ctx.sql, { jwksUrl: 'http://127.0.0.1:9/jwks.json', issuer, audience }),
    });
    try {
      const res = await app.inject({
        method: 'GET',
        url: '/api/me',
        headers: { authorization: `Bearer ${await token()}`, 'x-organization-id': ids.org, 'x-workspace-id': ids.ws },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await app.close();
    }
  });
});

describe('PATCH /api/admin/users/:id', () => {
  it('answers 404 for an unknown user, 409 for a subject taken, 400 for a bad body', async () => {
    const patch = (id: string, payload: unknown) =>
      ctx.app.inject({ method: 'PATCH', url: `/api/admin/users/${id}`, headers: ctx.adminHeaders, payload: payload as object });
    expect((await patch('00000000-0000-4000-8000-000000000000', { externalSubject: 'x' })).statusCode).toBe(404);
    const other = await tenancy.createUser(ctx.sql, 'other@example.com');
    expect((await patch(other.id, { externalSubject: 'subject-1' })).statusCode).toBe(409);
    const bad = await patch(other.id, { externalSubject: '', extra: 1 });
    expect(bad.statusCode).toBe(400);
  });
});
