import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

type Json = Record<string, any>;

async function call(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: Json) {
  const res = await ctx.app.inject({ method, url, headers: tenant.headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
}

async function createPrompt(name: string) {
  const res = await call('POST', '/api/prompt', { name, systemPrompt: 'v0' });
  expect(res.status).toBe(201);
  return res.body.data as Json;
}

/** The rows as the database holds them, whatever the API says. */
const storedVersions = (groupId: string) =>
  ctx.sql<{ version: string; is_latest: boolean }[]>`
    select version, is_latest from prompts where prompt_group_id = ${groupId}
    order by version_major desc, version_minor desc, version_patch desc`;

describe('concurrent writers on one prompt', () => {
  it('20 concurrent version creations: every accepted version stored once, exactly one latest, losers 409', async () => {
    const base = await createPrompt('race-mixed');
    // Ten versions, each sent twice, in an order that is not ascending: duplicates lose, and
    // so does a version that arrives after a higher one.
    const versions = [3, 7, 1, 9, 5, 10, 2, 8, 4, 6].map((n) => `1.${n}.0`);
    const requests = [...versions, ...versions.slice().reverse()].map((newVersion) =>
      call('POST', `/api/prompt/${base.id}/versions`, { newVersion, changes: { systemPrompt: `text ${newVersion}`, isLatest: true } }),
    );
    const results = await Promise.all(requests);

    expect(results.map((r) => r.status).filter((s) => s !== 201 && s !== 409)).toEqual([]);
    const accepted = results.filter((r) => r.status === 201).map((r) => r.body.data.version as string);
    expect(new Set(accepted).size).toBe(accepted.length);
    expect(accepted).toContain('1.10.0');
    for (const loser of results.filter((r) => r.status === 409)) expect(loser.body.error.code).toBe('CONFLICT');

    const rows = await storedVersions(base.promptGroupId);
    expect(rows.map((r) => r.version).sort()).toEqual([...accepted, '1.0.0'].sort());
    expect(rows.filter((r) => r.is_latest).map((r) => r.version)).toEqual(['1.10.0']);
  });

  it('20 writers of the same version: one 201, nineteen 409', async () => {
    const base = await createPrompt('race-same');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', `/api/prompt/${base.id}/versions`, {
          newVersion: '2.0.0',
          changes: { description: `writer ${i}`, isLatest: i % 2 === 0 },
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(19).fill(409)]);
    const rows = await storedVersions(base.promptGroupId);
    expect(rows.map((r) => r.version)).toEqual(['2.0.0', '1.0.0']);
    expect(rows.filter((r) => r.is_latest)).toHaveLength(1);
  });

  it('20 concurrent updates all succeed with consecutive versions, the highest one latest', async () => {
    const base = await createPrompt('race-patch');
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PATCH', `/api/prompt/${base.id}`, { description: `update ${i}` })),
    );
    const elapsed = performance.now() - started;
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const expected = Array.from({ length: 20 }, (_, i) => `1.0.${20 - i}`);
    expect(
      results.map((r) => r.body.data.version).sort((a: string, b: string) => Number(b.split('.')[2]) - Number(a.split('.')[2])),
    ).toEqual(expected);
    const rows = await storedVersions(base.promptGroupId);
    expect(rows.map((r) => r.version)).toEqual([...expected, '1.0.0']);
    expect(rows.filter((r) => r.is_latest).map((r) => r.version)).toEqual(['1.0.20']);
    console.info(`20 concurrent prompt updates took ${elapsed.toFixed(0)} ms`);
  });

  it('20 concurrent creations of one name: one 201, the rest 409', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', '/api/prompt', { name: 'race-create', systemPrompt: 's' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(19).fill(409)]);
  });

  it('a version racing a delete either lands before it or answers 404, never 500', async () => {
    const base = await createPrompt('race-delete');
    const results = await Promise.all([
      call('PATCH', `/api/prompt/${base.id}`, {}),
      ctx.app.inject({ method: 'DELETE', url: `/api/prompt/${base.id}`, headers: tenant.headers }).then((r) => ({ status: r.statusCode })),
      call('PATCH', `/api/prompt/${base.id}`, {}),
    ]);
    for (const r of results) expect([200, 201, 404]).toContain(r.status);
    expect(await storedVersions(base.promptGroupId)).toEqual([]);
  });
});

describe('the database holds the rules even when the code does not', () => {
  async function insertRaw(groupId: string, name: string, version: [number, number, number], isLatest: boolean, text = version.join('.')) {
    await ctx.sql`
      insert into prompts (workspace_id, prompt_group_id, name, version, version_major, version_minor, version_patch, is_latest, system_prompt)
      values (${tenant.workspaceId}, ${groupId}, ${name}, ${text}, ${version[0]}, ${version[1]}, ${version[2]}, ${isLatest}, 's')`;
  }
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'ok',
      (e: { code?: string }) => e.code,
    );

  it('refuses a second latest version of a name', async () => {
    const base = await createPrompt('db-latest');
    expect(await codeOf(insertRaw(base.promptGroupId, base.name, [1, 0, 1], true))).toBe('23505');
    expect(await codeOf(insertRaw(base.promptGroupId, base.name, [1, 0, 1], false))).toBe('ok');
  });

  it('refuses a duplicate version, a text that disagrees with its key, and a name foreign to the group', async () => {
    const base = await createPrompt('db-version');
    expect(await codeOf(insertRaw(base.promptGroupId, base.name, [1, 0, 0], false))).toBe('23505');
    expect(await codeOf(insertRaw(base.promptGroupId, base.name, [1, 2, 0], false, '1.20.0'))).toBe('23514');
    expect(await codeOf(insertRaw(base.promptGroupId, base.name, [1, 2, 0], false, '1.2.0-rc.1'))).toBe('23514');
    expect(await codeOf(insertRaw(base.promptGroupId, 'other-name', [1, 3, 0], false))).toBe('23503');
  });

  it('lets each workspace use the same name', async () => {
    const other = await ctx.tenant();
    const mine = await createPrompt('shared-name');
    const theirs = await ctx.app.inject({
      method: 'POST',
      url: '/api/prompt',
      headers: other.headers,
      payload: { name: 'shared-name', systemPrompt: 's' },
    });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().data.promptGroupId).not.toBe(mine.promptGroupId);
    expect(theirs.json().data.isLatest).toBe(true);
  });
});
