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

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  const res = await ctx.app.inject({
    method,
    url,
    headers: tenant.headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
  return { status: res.statusCode, body: res.json<Json>() };
}

let seq = 0;
async function createPrompt(extra: Json = {}) {
  const res = await call('POST', '/api/prompt', { name: `prompt-${++seq}`, systemPrompt: 'You are {role}.', ...extra });
  expect(res.status).toBe(201);
  return res.body.data as Json;
}

const versionsOf = async (name: string) =>
  ((await call('GET', `/api/prompt?name=${encodeURIComponent(name)}`)).body.data as Json[]).map((p) => ({
    version: p.version,
    isLatest: p.isLatest,
  }));

describe('POST /api/prompt', () => {
  it('creates the first version, 1.0.0 by default and latest automatically (flag table, row 1)', async () => {
    const res = await call('POST', '/api/prompt', {
      name: 'support-agent',
      systemPrompt: 'You help {customer}.',
      humanPrompt: 'Question: {question}',
      description: 'first draft',
      metadata: { team: 'support', temperature: 0.2 },
      outputSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    });
    expect(res.status).toBe(201);
    expect(res.body.meta.requestId).toEqual(expect.any(String));
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      name: 'support-agent',
      version: '1.0.0',
      promptGroupId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      isLatest: true,
      labels: ['latest'],
      systemPrompt: 'You help {customer}.',
      humanPrompt: 'Question: {question}',
      rawPrompt: null,
      description: 'first draft',
      metadata: { team: 'support', temperature: 0.2 },
      outputSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
      workspaceId: tenant.workspaceId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('takes an explicit first version', async () => {
    const p = await createPrompt({ version: '0.3.0' });
    expect(p).toMatchObject({ version: '0.3.0', isLatest: true });
  });

  it('answers 409 for a name that exists in the workspace', async () => {
    const p = await createPrompt();
    const res = await call('POST', '/api/prompt', { name: p.name, systemPrompt: 'other' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'CONFLICT', details: { name: p.name } });
  });

  it('answers 400 with the path of each bad field', async () => {
    const res = await call('POST', '/api/prompt', {
      name: '',
      version: '1.0',
      metadata: 'x',
      outputSchema: { type: 'nope' },
      isLatest: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    const paths = (res.body.error.details.issues as Json[]).map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'body.name',
        'body.version',
        'body.systemPrompt',
        'body.metadata',
        'body.outputSchema.type',
        'body.isLatest',
      ]),
    );
  });
});

describe('POST /api/prompt/:id/versions', () => {
  it('carries unchanged fields over from the base record and leaves the flag when isLatest is absent', async () => {
    const base = await createPrompt({ humanPrompt: 'Q: {q}', description: 'd1', metadata: { a: 1 }, rawPrompt: 'raw' });
    const res = await call('POST', `/api/prompt/${base.id}/versions`, {
      newVersion: '1.1.0',
      changes: { systemPrompt: 'You are {role}, be brief.' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: base.name,
      version: '1.1.0',
      promptGroupId: base.promptGroupId,
      isLatest: false,
      systemPrompt: 'You are {role}, be brief.',
      humanPrompt: 'Q: {q}',
      rawPrompt: 'raw',
      description: 'd1',
      metadata: { a: 1 },
    });
    expect(await versionsOf(base.name)).toEqual([
      { version: '1.1.0', isLatest: false },
      { version: '1.0.0', isLatest: true },
    ]);
  });

  it('moves the flag with isLatest true (flag table, row 2) and keeps it with isLatest false', async () => {
    const base = await createPrompt();
    const v2 = await call('POST', `/api/prompt/${base.id}/versions`, { newVersion: '1.0.1', changes: { isLatest: true } });
    expect(v2.body.data.isLatest).toBe(true);
    const v3 = await call('POST', `/api/prompt/${base.id}/versions`, {
      newVersion: '1.0.2',
      changes: { isLatest: false, description: 'x' },
    });
    expect(v3.body.data.isLatest).toBe(false);
    expect(await versionsOf(base.name)).toEqual([
      { version: '1.0.2', isLatest: false },
      { version: '1.0.1', isLatest: true },
      { version: '1.0.0', isLatest: false },
    ]);
    expect((await call('GET', `/api/prompt/${base.id}`)).body.data.isLatest).toBe(false);
  });

  it('answers 409 for a version not greater than every version of the name, and 400 for a non-semver one', async () => {
    const base = await createPrompt();
    await call('POST', `/api/prompt/${base.id}/versions`, { newVersion: '1.10.0', changes: {} });
    for (const newVersion of ['1.0.0', '1.9.0', '1.10.0', '0.99.99']) {
      const res = await call('POST', `/api/prompt/${base.id}/versions`, { newVersion, changes: {} });
      expect(res.status, newVersion).toBe(409);
      expect(res.body.error.details).toMatchObject({ newVersion, highestVersion: '1.10.0' });
    }
    for (const newVersion of ['1.11', 'v1.11.0', '1.11.0-rc.1', '1.11.0+b1', '01.11.0', 'latest']) {
      const res = await call('POST', `/api/prompt/${base.id}/versions`, { newVersion, changes: {} });
      expect(res.status, newVersion).toBe(400);
      expect(res.body.error.details.issues[0].path).toBe('body.newVersion');
    }
    expect((await call('POST', `/api/prompt/${base.id}/versions`, { newVersion: '1.11.0', changes: {} })).status).toBe(201);
  });

  it('refuses fields that are not editable, each with its path', async () => {
    const base = await createPrompt();
    const res = await call('POST', `/api/prompt/${base.id}/versions`, {
      newVersion: '2.0.0',
      changes: {
        name: 'renamed',
        promptGroupId: base.promptGroupId,
        systemPrompt: 7,
        outputSchema: { properties: { a: { type: 'bogus' } } },
      },
    });
    expect(res.status).toBe(400);
    const paths = (res.body.error.details.issues as Json[]).map((i) => i.path).sort();
    expect(paths).toEqual([
      'body.changes.name',
      'body.changes.outputSchema.properties.a.type',
      'body.changes.promptGroupId',
      'body.changes.systemPrompt',
    ]);
    expect((await call('POST', `/api/prompt/${base.id}/versions`, { newVersion: '2.0.0' })).body.error.details.issues[0].path).toBe(
      'body.changes',
    );
  });

  it('clears optional fields with null', async () => {
    const base = await createPrompt({ humanPrompt: 'h', outputSchema: { type: 'string' } });
    const res = await call('POST', `/api/prompt/${base.id}/versions`, {
      newVersion: '1.0.1',
      changes: { humanPrompt: null, outputSchema: null },
    });
    expect(res.body.data).toMatchObject({ humanPrompt: null, outputSchema: null, systemPrompt: base.systemPrompt });
  });

  it('rolls back by a new version carrying older content with isLatest true (rule 2)', async () => {
    const v1 = await createPrompt({ systemPrompt: 'good wording' });
    const v2 = (await call('PATCH', `/api/prompt/${v1.id}`, { systemPrompt: 'worse wording' })).body.data;
    expect(v2).toMatchObject({ version: '1.0.1', isLatest: true });
    const rollback = await call('POST', `/api/prompt/${v1.id}/versions`, {
      newVersion: '1.0.2',
      changes: { isLatest: true, description: 'rollback to 1.0.0' },
    });
    expect(rollback.status).toBe(201);
    expect(rollback.body.data).toMatchObject({ version: '1.0.2', isLatest: true, systemPrompt: 'good wording' });
    // The older version is not re-flagged; it and the bad one are kept.
    expect(await versionsOf(v1.name)).toEqual([
      { version: '1.0.2', isLatest: true },
      { version: '1.0.1', isLatest: false },
      { version: '1.0.0', isLatest: false },
    ]);
  });
});

describe('PATCH /api/prompt/:id', () => {
  it('stores a new latest version, patch-incremented from the highest, keeping earlier ones (flag table, row 3)', async () => {
    const v1 = await createPrompt({ description: 'one' });
    await call('POST', `/api/prompt/${v1.id}/versions`, { newVersion: '1.4.0', changes: {} });
    const res = await call('PATCH', `/api/prompt/${v1.id}`, { systemPrompt: 'new text' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ version: '1.4.1', isLatest: true, systemPrompt: 'new text', description: 'one' });
    const minor = await call('PATCH', `/api/prompt/${res.body.data.id}`, { bump: 'minor' });
    expect(minor.body.data).toMatchObject({ version: '1.5.0', isLatest: true, systemPrompt: 'new text' });
    const major = await call('PATCH', `/api/prompt/${v1.id}`, { bump: 'major', outputSchema: { type: 'object' } });
    expect(major.body.data).toMatchObject({
      version: '2.0.0',
      isLatest: true,
      systemPrompt: v1.systemPrompt,
      outputSchema: { type: 'object' },
    });
    expect(await versionsOf(v1.name)).toEqual([
      { version: '2.0.0', isLatest: true },
      { version: '1.5.0', isLatest: false },
      { version: '1.4.1', isLatest: false },
      { version: '1.4.0', isLatest: false },
      { version: '1.0.0', isLatest: false },
    ]);
    // The earlier record is unchanged but for its flag.
    expect((await call('GET', `/api/prompt/${v1.id}`)).body.data).toMatchObject({
      ...v1,
      isLatest: false,
      labels: [],
      updatedAt: expect.any(String),
    });
  });

  it('answers 400 for unknown fields and a bad bump', async () => {
    const v1 = await createPrompt();
    const res = await call('PATCH', `/api/prompt/${v1.id}`, { version: '9.9.9', bump: 'giant' });
    expect(res.status).toBe(400);
    expect((res.body.error.details.issues as Json[]).map((i) => i.path).sort()).toEqual(['body.bump', 'body.version']);
  });
});

describe('GET /api/prompt', () => {
  it('lists name ascending then version descending by semver, with filters and pages', async () => {
    const b = (await call('POST', '/api/prompt', { name: 'order-b', systemPrompt: 's' })).body.data;
    const a = (await call('POST', '/api/prompt', { name: 'order-a', systemPrompt: 's', version: '1.9.0' })).body.data;
    await call('POST', `/api/prompt/${a.id}/versions`, { newVersion: '1.10.0', changes: { isLatest: true } });
    await call('POST', `/api/prompt/${a.id}/versions`, { newVersion: '1.10.1', changes: {} });
    await call('POST', `/api/prompt/${b.id}/versions`, { newVersion: '2.0.0', changes: {} });

    const all = (await call('GET', '/api/prompt?limit=200')).body;
    const ours = (all.data as Json[]).filter((p) => p.name.startsWith('order-')).map((p) => `${p.name}@${p.version}`);
    expect(ours).toEqual(['order-a@1.10.1', 'order-a@1.10.0', 'order-a@1.9.0', 'order-b@2.0.0', 'order-b@1.0.0']);
    expect(all.meta.pagination).toEqual({ limit: 200, offset: 0, total: (all.data as Json[]).length, hasMore: false, nextCursor: null });

    const latest = (await call('GET', '/api/prompt?isLatest=true&limit=200')).body.data as Json[];
    expect(latest.every((p) => p.isLatest)).toBe(true);
    expect(latest.filter((p) => p.name.startsWith('order-')).map((p) => `${p.name}@${p.version}`)).toEqual([
      'order-a@1.10.0',
      'order-b@1.0.0',
    ]);
    const notLatest = (await call('GET', '/api/prompt?isLatest=false&name=order-a')).body.data as Json[];
    expect(notLatest.map((p) => p.version)).toEqual(['1.10.1', '1.9.0']);

    const page = (await call('GET', '/api/prompt?name=order-a&limit=1&offset=1')).body;
    expect(page.data.map((p: Json) => p.version)).toEqual(['1.10.0']);
    expect(page.meta.pagination).toEqual({ limit: 1, offset: 1, total: 3, hasMore: true, nextCursor: null });
    const last = (await call('GET', '/api/prompt?name=order-a&limit=1&offset=2')).body;
    expect(last.meta.pagination).toEqual({ limit: 1, offset: 2, total: 3, hasMore: false, nextCursor: null });
    expect((await call('GET', '/api/prompt?name=order-a')).body.meta.pagination).toEqual({
      limit: 50,
      offset: 0,
      total: 3,
      hasMore: false,
      nextCursor: null,
    });
    const past = (await call('GET', '/api/prompt?name=order-a&offset=10')).body;
    expect(past).toMatchObject({ data: [], meta: { pagination: { limit: 50, offset: 10, total: 3, hasMore: false } } });
    expect((await call('GET', '/api/prompt?name=nothing-here')).body.data).toEqual([]);
  });

  it('answers 400 for bad filters', async () => {
    const res = await call('GET', '/api/prompt?isLatest=yes&limit=0&offset=-1&sort=x');
    expect(res.status).toBe(400);
    expect((res.body.error.details.issues as Json[]).map((i) => i.path).sort()).toEqual([
      'querystring',
      'querystring.isLatest',
      'querystring.limit',
      'querystring.offset',
    ]);
  });
});

describe('GET and DELETE /api/prompt/:id', () => {
  it('reads one version, answers 404 for an unknown id and 400 for a non-integer one', async () => {
    const p = await createPrompt();
    expect((await call('GET', `/api/prompt/${p.id}`)).body.data).toEqual(p);
    expect((await call('GET', '/api/prompt/2147483000')).status).toBe(404);
    for (const id of ['abc', '1.5', '-3', '0', '99999999999']) {
      const res = await call('GET', `/api/prompt/${id}`);
      expect(res.status, id).toBe(400);
      expect(res.body.error.details.issues[0].path).toBe('params.id');
    }
  });

  it('deletes every version of the prompt through any of its ids', async () => {
    const v1 = await createPrompt();
    const v2 = (await call('PATCH', `/api/prompt/${v1.id}`, {})).body.data;
    const res = await call('DELETE', `/api/prompt/${v1.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ promptGroupId: v1.promptGroupId, name: v1.name, deletedVersions: 2 });
    expect((await call('GET', `/api/prompt/${v2.id}`)).status).toBe(404);
    expect(await versionsOf(v1.name)).toEqual([]);
    expect((await call('DELETE', `/api/prompt/${v2.id}`)).status).toBe(404);
    // The name is free again, and starts a new group.
    const again = await call('POST', '/api/prompt', { name: v1.name, systemPrompt: 'again' });
    expect(again.status).toBe(201);
    expect(again.body.data.promptGroupId).not.toBe(v1.promptGroupId);
  });
});

describe('POST /api/prompt/:id/render', () => {
  it('fills both templates and names missing placeholders and unused variables', async () => {
    const p = await createPrompt({
      systemPrompt: 'You are {role}. Answer as {{json}}: {{"a": {role}}}',
      humanPrompt: '{question} ({role}, {lang})',
    });
    const res = await call('POST', `/api/prompt/${p.id}/render`, { variables: { role: 'a tutor', question: 'Why?', tone: 'warm' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      promptId: p.id,
      version: '1.0.0',
      systemPrompt: 'You are a tutor. Answer as {json}: {"a": a tutor}',
      humanPrompt: 'Why? (a tutor, {lang})',
      missing: ['lang'],
      unused: ['tone'],
    });
  });

  it('renders with no variables and refuses bad ones', async () => {
    const p = await createPrompt();
    expect((await call('POST', `/api/prompt/${p.id}/render`, {})).body.data).toMatchObject({
      systemPrompt: 'You are {role}.',
      humanPrompt: null,
      missing: ['role'],
      unused: [],
    });
    const bad = await call('POST', `/api/prompt/${p.id}/render`, { variables: { role: ['x'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('body.variables.role');
    expect((await call('POST', '/api/prompt/2147483000/render', { variables: {} })).status).toBe(404);
  });
});
