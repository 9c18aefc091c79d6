import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/loupe.js', import.meta.url));

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

async function loupe(...args: string[]) {
  const { stdout } = await run(process.execPath, [bin, ...args], {
    env: { ...process.env, DATABASE_URL: ctx.postgresUrl, LOG_LEVEL: 'silent' },
  });
  return JSON.parse(stdout);
}

async function loupeFails(...args: string[]) {
  try {
    await run(process.execPath, [bin, ...args], { env: { ...process.env, DATABASE_URL: ctx.postgresUrl, LOG_LEVEL: 'silent' } });
  } catch (error) {
    return error as { code: number; stderr: string };
  }
  throw new Error('expected the command to fail');
}

// Each command starts a Node process that loads the service's code: seconds each on a busy
// machine, so the six-command test gets more than the default minute.
describe('npx loupe', () => {
  it('creates an organization, a workspace and a key; lists and revokes it', async () => {
    const org = await loupe('orgs', 'create', '--name', 'cli-org', '--plan', 'free');
    expect(org).toMatchObject({ name: 'cli-org', plan: 'free' });
    const ws = await loupe('workspaces', 'create', '--org', org.id, '--name', 'main');
    expect(ws).toMatchObject({ organizationId: org.id, name: 'main' });
    const key = await loupe('keys', 'create', '--org', org.id, '--workspace', ws.id, '--name', 'from-cli');
    expect(key.key).toMatch(/^lpk_/);

    const me = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': key.key } });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.workspaceId).toBe(ws.id);

    const list = await loupe('keys', 'list', '--org', org.id);
    expect(list).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(key.key);

    const revoked = await loupe('keys', 'revoke', key.id);
    expect(revoked.revokedAt).toEqual(expect.any(String));
    const after = await ctx.app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': key.key } });
    expect(after.statusCode).toBe(401);
  }, 180_000);

  it('fails with a clear message on bad arguments', async () => {
    const badPlan = await loupeFails('orgs', 'create', '--name', 'x', '--plan', 'gold');
    expect(badPlan.code).toBe(1);
    expect(badPlan.stderr).toMatch(/Invalid arguments/);
    const unknown = await loupeFails('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown command/);
  });

  it('stops on a bad configuration value, naming the variable', async () => {
    try {
      await run(process.execPath, [bin, 'keys', 'list', '--org', 'x'], { env: { ...process.env, PORT: 'eighty' } });
      throw new Error('expected failure');
    } catch (error) {
      expect((error as { stderr: string }).stderr).toMatch(/PORT: must be a whole number/);
    }
  });
});
