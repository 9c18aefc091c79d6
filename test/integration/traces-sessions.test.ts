import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { get, post } from './traces-fixtures.js';
import { expectedS1, expectedS2, expectedUsers, payload, planned, seedSessions, window } from './traces-sessions-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const ids = (res: { json(): { data: Array<{ traceId: string }> } }) => res.json().data.map((t) => t.traceId);

describe('GET /api/sessions and /api/sessions/:sessionId', () => {
  let tenant: Tenant;
  let t: Awaited<ReturnType<typeof seedSessions>>;
  beforeAll(async () => {
    tenant = await ctx.tenant();
    t = await seedSessions(ctx, tenant, 'sess');
  });

  it('lists the sessions of the window, most recent activity first, with their figures', async () => {
    const res = await get(ctx, tenant, `/api/sessions?${window}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([expectedS2, expectedS1]);
    expect(res.json().meta.pagination).toEqual({ limit: 20, hasMore: false, nextCursor: null });
  });

  it('filters by a user taking part (the session keeps all its figures)', async () => {
    expect((await get(ctx, tenant, `/api/sessions?${window}&userId=u2`)).json().data).toEqual([expectedS1]);
    expect((await get(ctx, tenant, `/api/sessions?${window}&userId=u1`)).json().data).toEqual([expectedS2, expectedS1]);
    expect((await get(ctx, tenant, `/api/sessions?${window}&userId=nobody`)).json().data).toEqual([]);
  });

  it('pages with a cursor', async () => {
    const first = await get(ctx, tenant, `/api/sessions?${window}&limit=1`);
    expect(first.json().data).toEqual([expectedS2]);
    const { nextCursor } = first.json().meta.pagination;
    expect(nextCursor).toEqual(expect.any(String));
    const second = await get(ctx, tenant, `/api/sessions?${window}&limit=1&cursor=${nextCursor}`);
    expect(second.json().data).toEqual([expectedS1]);
    expect(second.json().meta.pagination).toEqual({ limit: 1, hasMore: false, nextCursor: null });
  });

  it('defaults to the last 30 days and refuses a window over the maximum', async () => {
    expect((await get(ctx, tenant, '/api/sessions')).json().data).toEqual([]);
    const wide = await get(ctx, tenant, '/api/sessions?startAfter=2025-01-01T00:00:00Z&startBefore=2025-06-01T00:00:00Z');
    expect(wide.statusCode).toBe(400);
    expect(wide.json().error.details.issues[0]).toEqual({
      path: 'querystring.startAfter',
      message: expect.stringContaining('at most 92 days'),
    });
  });

  it('opens a session: its figures and its traces in time order, paged', async () => {
    const res = await get(ctx, tenant, `/api/sessions/s1?${window}&limit=2`);
    expect(res.statusCode).toBe(200);
    const { traces, ...summary } = res.json().data;
    expect(summary).toEqual(expectedS1);
    expect(traces.map((x: { traceId: string }) => x.traceId)).toEqual([t.a1, t.a2]);
    expect(traces[0]).toMatchObject({ userId: 'u1', tags: ['x', 'y'], sessionId: 's1', costUsd: 0.5 });
    const { nextCursor } = res.json().meta.pagination;
    const next = await get(ctx, tenant, `/api/sessions/s1?${window}&limit=2&cursor=${nextCursor}`);
    expect(next.json().data.traces.map((x: { traceId: string }) => x.traceId)).toEqual([t.a3]);
    expect(next.json().data.traceCount).toBe(3);
    expect(next.json().meta.pagination).toEqual({ limit: 2, hasMore: false, nextCursor: null });
    expect((await get(ctx, tenant, `/api/sessions/nope?${window}`)).statusCode).toBe(404);
    // A cursor of one session is refused for another.
    const other = await get(ctx, tenant, `/api/sessions/s2?${window}&limit=2&cursor=${nextCursor}`);
    expect(other.statusCode).toBe(400);
    expect(other.json().error.details.issues[0].path).toBe('querystring.cursor');
  });
});

describe('GET /api/session?sessionId= and /api/user?userId=: the id in the query', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await ctx.tenant();
    await seedSessions(ctx, tenant, 'query');
    const odd = [
      { id: 'dots-query', sessionId: '..', userId: '..', from: '13:00:00', to: '13:01:00' },
      { id: 'dot-query', sessionId: '.', userId: '.', from: '13:02:00', to: '13:03:00' },
      { id: 'slash-query', sessionId: 'a/b?c#d', userId: 'a/b?c#d', from: '13:04:00', to: '13:05:00' },
    ];
    expect((await post(ctx, tenant, odd.map(payload))).json().data).toMatchObject({ accepted: 3, rejected: 0 });
  });

  it('answers what the path forms answer', async () => {
    const byPath = await get(ctx, tenant, `/api/sessions/s1?${window}&limit=2`);
    const byQuery = await get(ctx, tenant, `/api/session?sessionId=s1&${window}&limit=2`);
    expect(byQuery.statusCode).toBe(200);
    expect(byQuery.json().data).toEqual(byPath.json().data);
    expect(byQuery.json().meta.pagination).toEqual(byPath.json().meta.pagination);
    const next = await get(ctx, tenant, `/api/session?sessionId=s1&${window}&limit=2&cursor=${byQuery.json().meta.pagination.nextCursor}`);
    expect(next.json().data.traces.map((x: { traceId: string }) => x.traceId)).toEqual(['a3-query']);
    expect((await get(ctx, tenant, `/api/user?userId=u1&${window}`)).json().data).toEqual(expectedUsers.u1);
    expect((await get(ctx, tenant, `/api/session?sessionId=nope&${window}`)).statusCode).toBe(404);
    expect((await get(ctx, tenant, `/api/user?userId=nobody&${window}`)).statusCode).toBe(404);
  });

  it('reaches the ids a URL path cannot carry: "..", "." (and "/", "?", "#" encoded)', async () => {
    for (const id of ['..', '.', 'a/b?c#d']) {
      const q = encodeURIComponent(id);
      const session = await get(ctx, tenant, `/api/session?sessionId=${q}&${window}`);
      expect(session.statusCode, id).toBe(200);
      expect(session.json().data).toMatchObject({ sessionId: id, traceCount: 1, userIds: [id] });
      const user = await get(ctx, tenant, `/api/user?userId=${q}&${window}`);
      expect(user.statusCode, id).toBe(200);
      expect(user.json().data).toMatchObject({ userId: id, traceCount: 1, sessionCount: 1 });
    }
    // What a client's URL parser makes of the path form: not the session "..".
    expect(new URL(`http://x/api/sessions/${encodeURIComponent('..')}`).pathname).toBe('/api/');
  });

  it('refuses a missing id naming it, and another workspace sees nothing', async () => {
    const missing = await get(ctx, tenant, `/api/session?${window}`);
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.details.issues[0].path).toBe('querystring.sessionId');
    expect((await get(ctx, tenant, `/api/user?${window}`)).json().error.details.issues[0].path).toBe('querystring.userId');
    const other = await ctx.tenant();
    expect((await get(ctx, other, `/api/session?sessionId=..&${window}`)).statusCode).toBe(404);
    expect((await get(ctx, other, `/api/user?userId=u1&${window}`)).statusCode).toBe(404);
  });
});

describe('GET /api/users and /api/users/:userId', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await ctx.tenant();
    await seedSessions(ctx, tenant, 'users');
  });

  it('lists users, most recent activity first, and pages with a cursor', async () => {
    const res = await get(ctx, tenant, `/api/users?${window}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([expectedUsers.u3, expectedUsers.u1, expectedUsers.u2]);
    const first = await get(ctx, tenant, `/api/users?${window}&limit=2`);
    expect(first.json().data).toEqual([expectedUsers.u3, expectedUsers.u1]);
    const second = await get(ctx, tenant, `/api/users?${window}&limit=2&cursor=${first.json().meta.pagination.nextCursor}`);
    expect(second.json().data).toEqual([expectedUsers.u2]);
    expect(second.json().meta.pagination.nextCursor).toBeNull();
  });

  it('answers one user, 404 for an unknown one', async () => {
    const res = await get(ctx, tenant, `/api/users/u1?${window}`);
    expect(res.json().data).toEqual(expectedUsers.u1);
    expect((await get(ctx, tenant, `/api/users/nobody?${window}`)).statusCode).toBe(404);
    expect((await get(ctx, tenant, '/api/users/u1')).statusCode).toBe(404); // outside the default 30 days
  });
});

describe('GET /api/traces filters and sorts', () => {
  let tenant: Tenant;
  let t: Awaited<ReturnType<typeof seedSessions>>;
  beforeAll(async () => {
    tenant = await ctx.tenant();
    t = await seedSessions(ctx, tenant, 'list');
  });

  it('filters by user, tags (all must match), name, model, minimum duration and cost', async () => {
    const cases: Array<[string, string[]]> = [
      ['userId=u1', [t.b1, t.a3, t.a1]],
      ['tag=x', [t.c1, t.a2, t.a1]],
      ['tag=x&tag=y', [t.c1, t.a1]],
      ['tag=z&tag=x&tag=y', [t.c1]],
      ['tag=nope', []],
      ['name=special', [t.c1]],
      ['model=gpt-4o', [t.c1, t.b1]],
      ['minDurationMs=120000', [t.b1, t.a2]],
      ['minCostUsd=1', [t.c1, t.b1]],
      ['minCostUsd=0', [t.c1, t.b1, t.a2, t.a1]],
      ['userId=u1&tag=y&minCostUsd=0.5', [t.b1, t.a1]],
    ];
    for (const [query, expected] of cases) {
      const res = await get(ctx, tenant, `/api/traces?${query}`);
      expect({ query, ids: ids(res), total: res.json().meta.pagination.total }).toEqual({ query, ids: expected, total: expected.length });
    }
  });

  it('sorts by start time, duration or cost, nulls last, ties by traceId', async () => {
    const cases: Array<[string, string[]]> = [
      ['sort=-costUsd', [t.c1, t.b1, t.a1, t.a2, t.a3]],
      ['sort=costUsd', [t.a2, t.a1, t.b1, t.c1, t.a3]],
      ['sort=-durationMs', [t.b1, t.a2, t.a1, t.c1, t.a3]],
      ['sort=durationMs', [t.a1, t.c1, t.a2, t.b1, t.a3]],
      ['sort=startTime', [t.a1, t.a2, t.a3, t.b1, t.c1]],
      ['sort=-startTime', [t.c1, t.b1, t.a3, t.a2, t.a1]],
    ];
    for (const [query, expected] of cases) {
      expect({ query, ids: ids(await get(ctx, tenant, `/api/traces?${query}&${window}`)) }).toEqual({ query, ids: expected });
    }
    // Sorted by cost or duration, the list reads the last 30 days unless told otherwise.
    expect(ids(await get(ctx, tenant, '/api/traces?sort=-costUsd'))).toEqual([]);
    const wide = await get(ctx, tenant, '/api/traces?sort=-costUsd&startAfter=2024-01-01T00:00:00Z&startBefore=2025-06-01T00:00:00Z');
    expect(wide.statusCode).toBe(400);
    expect(wide.json().error.details.issues[0].path).toBe('querystring.startAfter');
    // The newest-first list keeps the specification: no default window.
    expect(ids(await get(ctx, tenant, '/api/traces'))).toHaveLength(5);
  });

  it('walks a sorted list with cursors: every trace once, the total of the first page', async () => {
    const seen: string[] = [];
    let url = `/api/traces?sort=-costUsd&limit=2&${window}`;
    for (let page = 0; page < 5; page++) {
      const res = await get(ctx, tenant, url);
      expect(res.statusCode).toBe(200);
      seen.push(...ids(res));
      expect(res.json().meta.pagination.total).toBe(5);
      const next = res.json().meta.pagination.nextCursor;
      if (next === null) break;
      url = `/api/traces?sort=-costUsd&limit=2&${window}&cursor=${next}`;
    }
    expect(seen).toEqual([t.c1, t.b1, t.a1, t.a2, t.a3]);
  });

  it('refuses deep offsets, foreign or broken cursors and unknown sorts', async () => {
    const deep = await get(ctx, tenant, '/api/traces?offset=10001');
    expect(deep.statusCode).toBe(400);
    expect(deep.json().error.details.issues[0]).toEqual({ path: 'querystring.offset', message: expect.stringContaining('cursor') });
    const first = await get(ctx, tenant, '/api/traces?limit=1');
    const cursor = first.json().meta.pagination.nextCursor;
    for (const [query, path] of [
      [`limit=1&cursor=${cursor}&offset=3`, 'querystring.offset'],
      [`limit=1&cursor=${cursor}&userId=u1`, 'querystring.cursor'],
      ['cursor=not-a-cursor', 'querystring.cursor'],
      [`cursor=${Buffer.from(JSON.stringify({ q: 'x', k: "'; DROP", id: 'a' })).toString('base64url')}`, 'querystring.cursor'],
      ['sort=name', 'querystring.sort'],
      ['minCostUsd=', 'querystring.minCostUsd'],
      ['minDurationMs=-1', 'querystring.minDurationMs'],
    ]) {
      const res = await get(ctx, tenant, `/api/traces?${query}`);
      expect({ query, status: res.statusCode, path: res.json().error?.details.issues[0].path }).toEqual({ query, status: 400, path });
    }
    expect((await get(ctx, tenant, `/api/traces?limit=1&cursor=${cursor}`)).statusCode).toBe(200);
  });
});

describe('GET /api/traces/stats by user, session, tag and name', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await ctx.tenant();
    await seedSessions(ctx, tenant, 'stats');
  });
  const groups = async (query: string) => {
    const res = await get(ctx, tenant, `/api/traces/stats?${query}&from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z`);
    expect(res.statusCode).toBe(200);
    return res.json().data.groups.map((g: { key: string | null; traceCount: number; costUsd: number }) => [g.key, g.traceCount, g.costUsd]);
  };

  it('answers the top groups by cost, with limit', async () => {
    expect(await groups('groupBy=user')).toEqual([
      ['u3', 1, 2],
      ['u1', 3, 1.5],
      ['u2', 1, 0.25],
    ]);
    expect(await groups('groupBy=user&limit=2')).toEqual([
      ['u3', 1, 2],
      ['u1', 3, 1.5],
    ]);
    expect(await groups('groupBy=session')).toEqual([
      [null, 1, 2],
      ['s2', 1, 1],
      ['s1', 3, 0.75],
    ]);
    expect(await groups('groupBy=tag')).toEqual([
      ['y', 3, 3.5],
      ['x', 3, 2.75],
      ['z', 1, 2],
      [null, 1, 0],
    ]);
    expect(await groups('groupBy=name')).toEqual([
      ['special', 1, 2],
      [null, 4, 1.75],
    ]);
  });

  it('reads the last 30 days by default, and refuses a window over the maximum', async () => {
    const res = await get(ctx, tenant, '/api/traces/stats?groupBy=user');
    expect(res.json().data.groups).toEqual([]);
    expect(Date.parse(res.json().data.to) - Date.parse(res.json().data.from)).toBe(30 * 24 * 3600_000);
    const wide = await get(ctx, tenant, '/api/traces/stats?groupBy=session&from=2025-01-01T00:00:00Z&to=2025-06-01T00:00:00Z');
    expect(wide.statusCode).toBe(400);
    expect(wide.json().error.details.issues[0].path).toBe('querystring.from');
    const analytics = await get(ctx, tenant, '/api/traces/analytics?startAfter=2025-01-01T00:00:00Z&startBefore=2025-06-01T00:00:00Z');
    expect(analytics.statusCode).toBe(400);
    expect(analytics.json().error.details.issues[0]).toEqual({
      path: 'querystring.startAfter',
      message: expect.stringContaining('at most 92 days'),
    });
  });
});

describe('later payloads, re-sends, deletes and other workspaces', () => {
  it('takes user and tags from a later payload; a payload without them keeps them', async () => {
    const tenant = await ctx.tenant();
    const [plan] = planned('late');
    const bare = payload({ ...plan!, sessionId: 'late' });
    delete (bare as { userId?: string }).userId;
    delete (bare as { tags?: string[] }).tags;
    await post(ctx, tenant, [bare]);
    expect(ids(await get(ctx, tenant, '/api/traces?userId=u9'))).toEqual([]);
    await post(ctx, tenant, [{ ...bare, userId: 'u9', tags: ['late'], spans: [bare.spans[0]] }]);
    await post(ctx, tenant, [bare]);
    expect(ids(await get(ctx, tenant, '/api/traces?userId=u9&tag=late'))).toEqual([plan!.id]);
    expect((await get(ctx, tenant, `/api/users/u9?${window}`)).json().data).toMatchObject({ traceCount: 1, sessionCount: 1, costUsd: 0.5 });
    expect((await get(ctx, tenant, `/api/sessions/late?${window}`)).json().data).toMatchObject({ userIds: ['u9'], traceCount: 1 });
  });

  it('re-sending changes nothing; a delete leaves its session and user figures', async () => {
    const tenant = await ctx.tenant();
    const t = await seedSessions(ctx, tenant, 'resend');
    const read = async () => ({
      sessions: (await get(ctx, tenant, `/api/sessions?${window}`)).json().data,
      users: (await get(ctx, tenant, `/api/users?${window}`)).json().data,
      stats: (await get(ctx, tenant, '/api/traces/stats?groupBy=user&from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z')).json().data
        .groups,
    });
    const before = await read();
    await seedSessions(ctx, tenant, 'resend');
    await seedSessions(ctx, tenant, 'resend');
    expect(await read()).toEqual(before);
    expect(before.sessions).toEqual([expectedS2, expectedS1]);

    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t.a2}`, headers: tenant.headers })).statusCode).toBe(200);
    const after = await read();
    expect(after.sessions).toEqual([
      expectedS2,
      {
        ...expectedS1,
        traceCount: 2,
        lastEndTime: '2025-03-01T10:01:00.000Z',
        durationMs: 60_000,
        userIds: ['u1'],
        inputTokens: 100,
        outputTokens: 20,
        totalTokens: 120,
        costUsd: 0.5,
        errorCount: 0,
        traceErrorCount: 0,
      },
    ]);
    expect(after.users.map((u: { userId: string }) => u.userId)).toEqual(['u3', 'u1']);
    expect((await get(ctx, tenant, `/api/users/u2?${window}`)).statusCode).toBe(404);
    expect((await get(ctx, tenant, `/api/sessions/s1?${window}`)).json().data.traces.map((x: { traceId: string }) => x.traceId)).toEqual([
      t.a1,
      t.a3,
    ]);
  });

  it('a trace a later payload moves to another session leaves the first one, and can come back', async () => {
    const tenant = await ctx.tenant();
    const t = await seedSessions(ctx, tenant, 'moved');
    const [a1] = planned('moved');
    const open = async (sessionId: string) => {
      const { traces, ...summary } = (await get(ctx, tenant, `/api/sessions/${sessionId}?${window}`)).json().data;
      return { summary, traces: traces.map((x: { traceId: string }) => x.traceId) };
    };
    const listed = async () => (await get(ctx, tenant, `/api/sessions?${window}`)).json().data;

    await post(ctx, tenant, [payload({ ...a1!, sessionId: 's2' })]);
    const s1 = await open('s1');
    expect(s1.traces).toEqual([t.a2, t.a3]);
    expect(s1.summary).toMatchObject({ traceCount: 2, firstStartTime: '2025-03-01T10:05:00.000Z', userIds: ['u1', 'u2'], costUsd: 0.25 });
    const s2 = await open('s2');
    expect(s2.traces).toEqual([t.a1, t.b1]);
    expect(s2.summary).toMatchObject({ traceCount: 2, firstStartTime: '2025-03-01T10:00:00.000Z', costUsd: 1.5 });
    // The session page and the list (read from the trace summaries) agree.
    expect(await listed()).toEqual([s2.summary, s1.summary]);

    await post(ctx, tenant, [payload(a1!)]);
    expect(await open('s1')).toEqual({ summary: expectedS1, traces: [t.a1, t.a2, t.a3] });
    expect(await open('s2')).toEqual({ summary: expectedS2, traces: [t.b1] });
    expect(await listed()).toEqual([expectedS2, expectedS1]);
  });

  it('a trace a later payload moves to another user leaves the first one, and can come back', async () => {
    const tenant = await ctx.tenant();
    const t = await seedSessions(ctx, tenant, 'moveduser');
    const [a1] = planned('moveduser');
    const user = async (userId: string) => (await get(ctx, tenant, `/api/users/${userId}?${window}`)).json().data;
    const traces = async (query: string) => ids(await get(ctx, tenant, `/api/traces?${query}`));
    const sessionsOf = async (userId: string) =>
      (await get(ctx, tenant, `/api/sessions?${window}&userId=${userId}`)).json().data.map((s: { sessionId: string }) => s.sessionId);

    // a1 (u1, session s1, cost 0.5) goes to u3; u1 keeps a3 in s1 and b1 in s2.
    await post(ctx, tenant, [payload({ ...a1!, userId: 'u3' })]);
    expect(await traces('userId=u1')).toEqual([t.b1, t.a3]);
    expect(await traces('userId=u3')).toEqual([t.c1, t.a1]);
    expect((await get(ctx, tenant, '/api/traces?userId=u1&limit=1')).json().meta.pagination).toMatchObject({ total: 2 });
    expect(await user('u1')).toMatchObject({ traceCount: 2, sessionCount: 2, costUsd: 1 });
    expect(await user('u3')).toMatchObject({ traceCount: 2, sessionCount: 1, costUsd: 2.5 });
    expect(await sessionsOf('u3')).toEqual(['s1']);
    const stats = (await get(ctx, tenant, '/api/traces/stats?groupBy=user&from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z')).json().data
      .groups;
    expect(stats.find((g: { key: string }) => g.key === 'u1')).toMatchObject({ traceCount: 2, costUsd: 1 });

    // Back to u1: every figure is the seeded one again.
    await post(ctx, tenant, [payload(a1!)]);
    expect(await traces('userId=u1')).toEqual([t.b1, t.a3, t.a1]);
    expect(await traces('userId=u3')).toEqual([t.c1]);
    expect(await user('u1')).toEqual(expectedUsers.u1);
    expect(await sessionsOf('u3')).toEqual([]);
  });

  it("never shows another workspace's sessions or users", async () => {
    const owner = await ctx.tenant();
    const other = await ctx.tenant();
    await seedSessions(ctx, owner, 'iso');
    expect((await get(ctx, other, `/api/sessions?${window}`)).json().data).toEqual([]);
    expect((await get(ctx, other, `/api/users?${window}`)).json().data).toEqual([]);
    expect((await get(ctx, other, `/api/sessions/s1?${window}`)).statusCode).toBe(404);
    expect((await get(ctx, other, `/api/users/u1?${window}`)).statusCode).toBe(404);
    expect(
      (await get(ctx, other, `/api/traces/stats?groupBy=user&from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z`)).json().data.groups,
    ).toEqual([]);
    expect((await get(ctx, other, '/api/traces?userId=u1')).json().data).toEqual([]);
  });
});

describe('OpenAPI', () => {
  it('documents the new routes, their parameters and the 422 QUERY_TOO_EXPENSIVE answer', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of ['/api/sessions/', '/api/sessions/{sessionId}', '/api/users/', '/api/users/{userId}', '/api/session', '/api/user']) {
      const op = doc.paths[path]?.get ?? doc.paths[path.replace(/\/$/, '')]?.get;
      expect({ path, has: op !== undefined }).toEqual({ path, has: true });
      expect(op.responses['422'].description).toContain('QUERY_TOO_EXPENSIVE');
      expect(op.responses['404'] !== undefined).toBe(!path.endsWith('s/'));
    }
    const list = doc.paths['/api/traces'].get;
    const names = list.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['userId', 'tag', 'name', 'model', 'minDurationMs', 'minCostUsd', 'sort', 'cursor']));
    expect(list.responses['422'].description).toContain('QUERY_TOO_EXPENSIVE');
    expect(doc.paths['/api/traces/stats'].get.responses['422']).toBeDefined();
  });
});
