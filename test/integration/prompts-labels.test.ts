import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

type Json = Record<string, any>;

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Json, who: Tenant = tenant) {
  const res = await ctx.app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
}

/** A prompt with versions 1.0.0 … 1.(n-1).0; answers their records, oldest first. */
async function promptWithVersions(name: string, n: number): Promise<Json[]> {
  const first = await call('POST', '/api/prompt', { name, systemPrompt: 'v1.0.0' });
  expect(first.status).toBe(201);
  const records = [first.body.data];
  for (let i = 1; i < n; i += 1) {
    const next = await call('POST', `/api/prompt/${first.body.data.id}/versions`, {
      newVersion: `1.${i}.0`,
      changes: { systemPrompt: `v1.${i}.0`, isLatest: true },
    });
    expect(next.status).toBe(201);
    records.push(next.body.data);
  }
  return records;
}

const holders = (groupId: string, label: string) =>
  ctx.sql<{ prompt_id: number }[]>`select prompt_id from prompt_labels where prompt_group_id = ${groupId} and label = ${label}`;

describe('labels', () => {
  it('a record carries its labels; "latest" is the flag; moving a label takes it from its holder', async () => {
    const [v1, v2] = await promptWithVersions('labels-basic', 2);
    expect(v1!.labels).toEqual(['latest']); // as created, before 1.1.0 took the flag
    expect((await call('GET', `/api/prompt/${v1!.id}`)).body.data.labels).toEqual([]);
    expect(v2!.labels).toEqual(['latest']);

    const put = await call('PUT', `/api/prompt/${v1!.id}/labels/production`);
    expect(put.status).toBe(200);
    expect(put.body.data.labels).toEqual(['production']);
    await call('PUT', `/api/prompt/${v1!.id}/labels/staging`);
    const moved = await call('PUT', `/api/prompt/${v2!.id}/labels/production`);
    expect(moved.body.data.labels).toEqual(['latest', 'production']);
    expect((await call('GET', `/api/prompt/${v1!.id}`)).body.data.labels).toEqual(['staging']);

    const removed = await call('DELETE', `/api/prompt/${v1!.id}/labels/staging`);
    expect(removed.status).toBe(200);
    expect(removed.body.data.labels).toEqual([]);
    expect((await call('DELETE', `/api/prompt/${v1!.id}/labels/staging`)).status).toBe(404);
    const list = await call('GET', '/api/prompt?name=labels-basic');
    expect(list.body.data.map((p: Json) => p.labels)).toEqual([['latest', 'production'], []]);
  });

  it('refuses "latest" and malformed labels with 400 and the path', async () => {
    const [v1] = await promptWithVersions('labels-bad', 1);
    for (const label of ['latest', 'Production', 'a b', 'x'.repeat(65)]) {
      const res = await call('PUT', `/api/prompt/${v1!.id}/labels/${encodeURIComponent(label)}`);
      expect(res.status, label).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error.details)).toContain('label');
    }
    for (const labels of [['latest'], ['..'], ['Prod']]) {
      const body = await call('POST', `/api/prompt/${v1!.id}/versions`, { newVersion: '2.0.0', changes: {}, labels });
      expect(body.status, labels[0]).toBe(400);
      expect(body.body.error.details.issues[0].path).toBe('body.labels.0');
    }
    expect((await call('PUT', '/api/prompt/999999/labels/production')).status).toBe(404);
  });

  it('20 concurrent movers of one label leave exactly one holder and a complete history', async () => {
    const versions = await promptWithVersions('labels-race', 5);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PUT', `/api/prompt/${versions[i % 5]!.id}/labels/production`)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const rows = await holders(versions[0]!.promptGroupId, 'production');
    expect(rows).toHaveLength(1);

    const history = await call('GET', `/api/prompt/${versions[0]!.id}/label-history?label=production`);
    expect(history.status).toBe(200);
    const { moves, holdings } = history.body.data;
    // Each move starts where the one before it ended; the last one ends at the one holder.
    for (let i = 1; i < moves.length; i += 1) expect(moves[i].from).toEqual(moves[i - 1].to);
    expect(moves[0].from).toBeNull();
    expect(moves.at(-1).to.promptId).toBe(rows[0]!.prompt_id);
    expect(holdings).toHaveLength(moves.length);
    expect(holdings.filter((h: Json) => h.heldUntil === null)).toHaveLength(1);
    const resolved = await call('GET', '/api/prompt/resolve?name=labels-race&label=production');
    expect(resolved.body.data.id).toBe(rows[0]!.prompt_id);
  });

  it('the database itself holds one holder per label, on a version of the same prompt', async () => {
    const [a1, a2] = await promptWithVersions('labels-constraint-a', 2);
    const [b1] = await promptWithVersions('labels-constraint-b', 1);
    await ctx.sql`insert into prompt_labels (prompt_group_id, label, prompt_id) values (${a1!.promptGroupId}, 'prod', ${a1!.id})`;
    await expect(
      ctx.sql`insert into prompt_labels (prompt_group_id, label, prompt_id) values (${a1!.promptGroupId}, 'prod', ${a2!.id})`,
    ).rejects.toMatchObject({ code: '23505' });
    await expect(
      ctx.sql`insert into prompt_labels (prompt_group_id, label, prompt_id) values (${a1!.promptGroupId}, 'other', ${b1!.id})`,
    ).rejects.toMatchObject({ code: '23503' });
    await expect(
      ctx.sql`insert into prompt_labels (prompt_group_id, label, prompt_id) values (${a1!.promptGroupId}, 'latest', ${a2!.id})`,
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('history names the credential, the versions and the periods', async () => {
    const [v1, v2] = await promptWithVersions('labels-history', 2);
    const keyId = (await ctx.sql<{ id: string }[]>`select id from api_keys where workspace_id = ${tenant.workspaceId}`)[0]!.id;
    await call('PUT', `/api/prompt/${v1!.id}/labels/production`);
    await call('PUT', `/api/prompt/${v2!.id}/labels/production`);
    await call('PUT', `/api/prompt/${v2!.id}/labels/production`); // already there: no move
    await call('DELETE', `/api/prompt/${v2!.id}/labels/production`);
    const { body } = await call('GET', `/api/prompt/${v2!.id}/label-history`);
    expect(body.data.moves.map((m: Json) => [m.from?.version ?? null, m.to?.version ?? null])).toEqual([
      [null, '1.0.0'],
      ['1.0.0', '1.1.0'],
      ['1.1.0', null],
    ]);
    for (const move of body.data.moves) expect(move.movedBy).toEqual({ apiKeyId: keyId, userId: null });
    expect(body.data.holdings.map((h: Json) => [h.version, h.heldFrom, h.heldUntil])).toEqual([
      ['1.0.0', body.data.moves[0].movedAt, body.data.moves[1].movedAt],
      ['1.1.0', body.data.moves[1].movedAt, body.data.moves[2].movedAt],
    ]);
  });

  it('a new version may be labelled as it is created', async () => {
    const [v1] = await promptWithVersions('labels-on-create', 1);
    await call('PUT', `/api/prompt/${v1!.id}/labels/staging`);
    const created = await call('POST', `/api/prompt/${v1!.id}/versions`, {
      newVersion: '1.1.0',
      changes: { systemPrompt: 'new' },
      labels: ['staging', 'canary'],
    });
    expect(created.status).toBe(201);
    expect(created.body.data.labels).toEqual(['canary', 'staging']);
    expect((await call('GET', `/api/prompt/${v1!.id}`)).body.data.labels).toEqual(['latest']);
    const history = await call('GET', `/api/prompt/${v1!.id}/label-history?label=staging`);
    expect(history.body.data.moves.map((m: Json) => m.to.version)).toEqual(['1.0.0', '1.1.0']);
  });
});

describe('resolve', () => {
  it('by label, by version, latest; 404 when none; 400 for both', async () => {
    const [v1, v2, v3] = await promptWithVersions('resolve-me', 3);
    await call('PUT', `/api/prompt/${v1!.id}/labels/production`);
    const byLabel = await call('GET', '/api/prompt/resolve?name=resolve-me&label=production');
    expect(byLabel.status).toBe(200);
    expect(byLabel.body.data).toMatchObject({ id: v1!.id, version: '1.0.0', labels: ['production'] });
    expect((await call('GET', '/api/prompt/resolve?name=resolve-me&version=1.1.0')).body.data.id).toBe(v2!.id);
    expect((await call('GET', '/api/prompt/resolve?name=resolve-me')).body.data.id).toBe(v3!.id);
    expect((await call('GET', '/api/prompt/resolve?name=resolve-me&label=latest')).body.data.id).toBe(v3!.id);
    for (const url of [
      '/api/prompt/resolve?name=resolve-me&label=staging',
      '/api/prompt/resolve?name=resolve-me&version=9.0.0',
      '/api/prompt/resolve?name=nope',
    ]) {
      const res = await call('GET', url);
      expect(res.status, url).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const both = await call('GET', '/api/prompt/resolve?name=resolve-me&label=production&version=1.0.0');
    expect(both.status).toBe(400);
    expect((await call('GET', '/api/prompt/resolve?label=production')).status).toBe(400);
  });

  it('the label lookup uses the indexes, not a scan', async () => {
    // Tiny test tables are scanned whatever the indexes; with scans priced out, the plan shows
    // that an index serves every step (no step needs a scan).
    await ctx.sql`set enable_seqscan = off`;
    const rows = await ctx.sql<{ 'QUERY PLAN': string }[]>`
      explain select l.prompt_id from prompt_groups g join prompt_labels l on l.prompt_group_id = g.id and l.label = 'production'
      where g.workspace_id = ${tenant.workspaceId} and g.name = 'resolve-me'`;
    const planText = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(planText).toMatch(/Index/);
    expect(planText).not.toMatch(/Seq Scan/);
  });
});

describe('another workspace', () => {
  it('cannot see, move or resolve the labels of this one', async () => {
    const [v1] = await promptWithVersions('labels-private', 1);
    await call('PUT', `/api/prompt/${v1!.id}/labels/production`);
    expect((await call('PUT', `/api/prompt/${v1!.id}/labels/production`, undefined, other)).status).toBe(404);
    expect((await call('DELETE', `/api/prompt/${v1!.id}/labels/production`, undefined, other)).status).toBe(404);
    expect((await call('GET', `/api/prompt/${v1!.id}/label-history`, undefined, other)).status).toBe(404);
    expect((await call('GET', '/api/prompt/resolve?name=labels-private&label=production', undefined, other)).status).toBe(404);
    expect((await call('GET', `/api/prompt/${v1!.id}/diff?against=${v1!.id}`, undefined, other)).status).toBe(404);
    expect((await call('GET', '/api/prompt/resolve?name=labels-private&label=production')).body.data.id).toBe(v1!.id);
  });
});
