import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { post, span, uniqueId } from './traces-fixtures.js';
import { getJson, postScores } from './scores-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

describe('POST /api/scores', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await ctx.tenant();
  });

  it('stores one score, readable at once, with its author and a generated id', async () => {
    const traceId = uniqueId('t');
    const res = await postScores(ctx, tenant, { name: 'helpfulness', value: 0.75, traceId, comment: 'good' });
    expect(res.statusCode).toBe(200);
    const { accepted, rejected, ids } = res.json().data;
    expect({ accepted, rejected }).toEqual({ accepted: 1, rejected: 0 });
    const read = await getJson(ctx, tenant, `/api/scores/${ids[0]}`);
    expect(read.statusCode).toBe(200);
    const keyId = (await ctx.sql`select id from api_keys where workspace_id = ${tenant.workspaceId}`)[0]!.id as string;
    expect(read.json().data).toMatchObject({
      id: ids[0],
      name: 'helpfulness',
      dataType: 'numeric',
      value: 0.75,
      stringValue: null,
      comment: 'good',
      source: 'api',
      traceId,
      spanId: null,
      authorId: keyId,
    });
  });

  it('answers a batch per item: index and path of each bad score, the good ones stored', async () => {
    const traceId = uniqueId('t');
    const res = await postScores(ctx, tenant, {
      scores: [
        { name: 'ok', value: true, traceId },
        { name: '', value: 1, traceId },
        { name: 'no-target', value: 1 },
        { name: 'span-without-trace', value: 1, spanId: 's1' },
        { name: 'label', value: 'relevant', traceId, source: 'nope' },
        'not an object',
        { name: 'bad-number', value: Number.MAX_VALUE, traceId, timestamp: 'yesterday' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data.accepted).toBe(1);
    expect(data.rejected).toBe(6);
    expect(data.ids[0]).toEqual(expect.any(String));
    expect(data.ids.slice(1)).toEqual([null, null, null, null, null, null]);
    expect(data.errors.map((e: { index: number; path: string }) => [e.index, e.path])).toEqual([
      [1, 'scores.1.name'],
      [2, 'scores.2.traceId'],
      [3, 'scores.3.spanId'],
      [4, 'scores.4.source'],
      [5, 'scores.5'],
      [6, 'scores.6.timestamp'],
    ]);
    const stored = await getJson(ctx, tenant, `/api/scores/${data.ids[0]}`);
    expect(stored.json().data).toMatchObject({ dataType: 'boolean', value: 1, stringValue: 'true' });
  });

  it('refuses more than 1,000 scores in one request', async () => {
    const scores = Array.from({ length: 1001 }, () => ({ name: 'n', value: 1, traceId: 't' }));
    const res = await postScores(ctx, tenant, { scores });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues[0].path).toBe('body.scores');
  });

  it('upserts by id: a re-sent id corrects the score, never duplicates it', async () => {
    const traceId = uniqueId('t');
    const id = uniqueId('score');
    await postScores(ctx, tenant, { id, name: 'accuracy', value: 0.2, traceId });
    const first = (await getJson(ctx, tenant, `/api/scores/${id}`)).json().data;
    await postScores(ctx, tenant, { id, name: 'accuracy', value: 0.9, traceId, comment: 'corrected' });
    const list = (await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id, value: 0.9, comment: 'corrected', createdAt: first.createdAt });
    const again = await postScores(ctx, tenant, {
      scores: [
        { id, name: 'accuracy', value: 0.1, traceId },
        { id, name: 'accuracy', value: 0.3, traceId },
      ],
    });
    expect(again.json().data.errors).toEqual([{ index: 1, id, path: 'scores.1.id', message: 'duplicates the id of scores.0' }]);
    expect((await getJson(ctx, tenant, `/api/scores/${id}`)).json().data.value).toBe(0.1);
  });

  it('a correction that moves a score to another trace and name leaves nothing on the first', async () => {
    const [from, to] = [uniqueId('t'), uniqueId('t')];
    await post(
      ctx,
      tenant,
      [from, to].map((traceId) => ({ traceId, source: 'sdk', spans: [span({ spanId: 'root' })] })),
    );
    const id = uniqueId('score');
    await postScores(ctx, tenant, { id, name: 'moved-from', value: 0.2, traceId: from, spanId: 'root' });
    await postScores(ctx, tenant, { id, name: 'moved-to', value: 0.7, traceId: to });
    const ids = async (query: string) =>
      ((await getJson(ctx, tenant, `/api/scores?${query}`)).json().data as { id: string }[]).map((s) => s.id);
    expect(await ids(`traceId=${from}`)).toEqual([]);
    expect(await ids(`traceId=${to}`)).toEqual([id]);
    expect(await ids('name=moved-from')).toEqual([]);
    expect((await getJson(ctx, tenant, `/api/traces/${from}`)).json().data.scores).toBeUndefined();
    expect((await getJson(ctx, tenant, `/api/traces/${to}`)).json().data.scores).toMatchObject([{ id, name: 'moved-to', value: 0.7 }]);
    const traces = async (query: string) =>
      ((await getJson(ctx, tenant, `/api/traces?${query}`)).json().data as { traceId: string }[]).map((t) => t.traceId);
    expect(await traces('score=moved-from')).toEqual([]);
    expect(await traces('score=moved-to')).toEqual([to]);
  });

  it('deletes a score', async () => {
    const traceId = uniqueId('t');
    const [id] = (await postScores(ctx, tenant, { name: 'x', value: 1, traceId })).json().data.ids;
    const del = await ctx.app.inject({ method: 'DELETE', url: `/api/scores/${id}`, headers: tenant.headers });
    expect(del.json().data).toEqual({ id, deleted: true });
    expect((await getJson(ctx, tenant, `/api/scores/${id}`)).statusCode).toBe(404);
    expect((await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data).toEqual([]);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/api/scores/${id}`, headers: tenant.headers })).statusCode).toBe(404);
  });
});

describe('score configs', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await ctx.tenant();
  });
  const create = (payload: object) => ctx.app.inject({ method: 'POST', url: '/api/score-configs', headers: tenant.headers, payload });

  it('names each bad field of a config', async () => {
    const res = await create({
      name: '',
      dataType: 'boolean',
      min: 0,
      max: -1,
      categories: [{ label: 'a', value: 1 }],
      higherIsBetter: 'yes',
    });
    expect(res.statusCode).toBe(400);
    const paths = res
      .json()
      .error.details.issues.map((i: { path: string }) => i.path)
      .sort();
    expect(paths).toEqual(['body.higherIsBetter', 'body.name']);
    const rules = await create({ name: 'r', dataType: 'boolean', min: 0, max: -1, categories: [{ label: 'a', value: 1 }] });
    expect(
      rules
        .json()
        .error.details.issues.map((i: { path: string }) => i.path)
        .sort(),
    ).toEqual(['body.categories', 'body.max', 'body.min']);
    const categorical = await create({
      name: 'c',
      dataType: 'categorical',
      categories: [
        { label: 'a', value: 1 },
        { label: 'a', value: 2 },
      ],
    });
    expect(categorical.json().error.details.issues.map((i: { path: string }) => i.path)).toEqual(['body.categories.1.label']);
    expect((await create({ name: 'c2', dataType: 'categorical' })).json().error.details.issues[0].path).toBe('body.categories');
  });

  it('validates scores against the config of their name, and maps categories', async () => {
    const numeric = await create({ name: 'rating', dataType: 'numeric', min: 1, max: 5 });
    expect(numeric.statusCode).toBe(201);
    expect((await create({ name: 'rating', dataType: 'numeric' })).statusCode).toBe(409);
    await create({
      name: 'tone',
      dataType: 'categorical',
      categories: [
        { label: 'rude', value: 0 },
        { label: 'polite', value: 1 },
      ],
    });
    const traceId = uniqueId('t');
    const res = await postScores(ctx, tenant, {
      scores: [
        { name: 'rating', value: 6, traceId },
        { name: 'rating', value: 'high', traceId },
        { name: 'rating', value: true, traceId, dataType: 'boolean' },
        { name: 'tone', value: 'neutral', traceId },
        { name: 'tone', value: 'polite', traceId },
        { name: 'rating', value: 4, traceId },
      ],
    });
    const data = res.json().data;
    expect(data.errors.map((e: { path: string }) => e.path)).toEqual([
      'scores.0.value',
      'scores.1.value',
      'scores.2.dataType',
      'scores.3.value',
    ]);
    expect(data.errors[0].message).toBe('must be at most 5 (config)');
    const tone = (await getJson(ctx, tenant, `/api/scores/${data.ids[4]}`)).json().data;
    expect(tone).toMatchObject({ dataType: 'categorical', value: 1, stringValue: 'polite', configId: expect.any(String) });
  });

  it('lists, reads, updates and deletes configs; an update is checked as a whole', async () => {
    const made = (await create({ name: 'speed', dataType: 'numeric', min: 0, max: 10, higherIsBetter: false })).json().data;
    const patch = (payload: object) =>
      ctx.app.inject({ method: 'PATCH', url: `/api/score-configs/${made.id}`, headers: tenant.headers, payload });
    const bad = await patch({ min: 20 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues).toEqual([{ path: 'body.max', message: 'must be at least min' }]);
    expect((await patch({ name: 'renamed' })).statusCode).toBe(400);
    const ok = await patch({ archived: true, description: 'seconds' });
    expect(ok.json().data).toMatchObject({ archived: true, description: 'seconds', min: 0, max: 10, higherIsBetter: false });
    const listed = (await getJson(ctx, tenant, '/api/score-configs')).json().data.map((c: { name: string }) => c.name);
    expect(listed).not.toContain('speed');
    expect(
      (await getJson(ctx, tenant, '/api/score-configs?includeArchived=true')).json().data.map((c: { name: string }) => c.name),
    ).toContain('speed');
    const del = await ctx.app.inject({ method: 'DELETE', url: `/api/score-configs/${made.id}`, headers: tenant.headers });
    expect(del.json().data).toEqual({ id: made.id, deleted: true });
    expect((await getJson(ctx, tenant, `/api/score-configs/${made.id}`)).statusCode).toBe(404);
  });
});

describe('scores and traces', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await ctx.tenant();
  });

  it('accepts scores before their trace and joins them when it lands; deleting the trace deletes them', async () => {
    const traceId = uniqueId('t');
    const posted = await postScores(ctx, tenant, {
      scores: [
        { name: 'quality', value: 0.5, traceId },
        { name: 'quality', value: 1, traceId, spanId: 'root' },
        { name: 'quality', value: 0, traceId, spanId: 'child' },
        { name: 'label', value: 'yes', traceId, spanId: 'child' },
      ],
    });
    expect(posted.json().data.accepted).toBe(4);
    expect((await getJson(ctx, tenant, `/api/traces/${traceId}`)).statusCode).toBe(404);
    await post(ctx, tenant, [
      { traceId, source: 'sdk', spans: [span({ spanId: 'root' }), span({ spanId: 'child', parentSpanId: 'root' })] },
    ]);
    const detail = (await getJson(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail.scores.map((s: { value: number }) => s.value)).toEqual([0.5]);
    const bySpan = Object.fromEntries(
      detail.spans.map((s: { spanId: string; scores: { name: string }[] }) => [s.spanId, s.scores.map((x) => x.name).sort()]),
    );
    expect(bySpan).toEqual({ root: ['quality'], child: ['label', 'quality'] });
    const tree = (await getJson(ctx, tenant, `/api/traces/${traceId}/tree`)).json().data;
    expect(tree.scores).toHaveLength(1);
    expect(tree.spans.find((s: { spanId: string }) => s.spanId === 'child').scores).toHaveLength(2);

    const list = (await getJson(ctx, tenant, `/api/traces?limit=100`)).json().data;
    const item = list.find((t: { traceId: string }) => t.traceId === traceId);
    expect(item.scores).toEqual({ quality: { n: 3, mean: 0.5 }, label: { n: 1, mean: 0 } });

    await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${traceId}`, headers: tenant.headers });
    expect((await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data).toEqual([]);
    for (const id of posted.json().data.ids) expect((await getJson(ctx, tenant, `/api/scores/${id}`)).statusCode).toBe(404);
  });

  it('filters the trace list by a score: range and category', async () => {
    const traces = ['a', 'b', 'c'].map(() => uniqueId('t'));
    await post(
      ctx,
      tenant,
      traces.map((traceId) => ({ traceId, source: 'sdk', spans: [span({ spanId: 'root' })] })),
    );
    await postScores(ctx, tenant, {
      scores: [
        { name: 'relevance', value: 0.2, traceId: traces[0] },
        { name: 'relevance', value: 0.9, traceId: traces[1] },
        { name: 'relevance', value: 0.7, traceId: traces[2], spanId: 'root' },
        { name: 'verdict', value: 'pass', traceId: traces[1] },
        { name: 'verdict', value: 'fail', traceId: traces[2] },
      ],
    });
    const ids = async (query: string) =>
      ((await getJson(ctx, tenant, `/api/traces?${query}`)).json().data as { traceId: string }[]).map((t) => t.traceId).sort();
    expect(await ids('score=relevance')).toEqual([...traces].sort());
    expect(await ids('score=relevance&scoreMin=0.5')).toEqual([traces[1], traces[2]].sort());
    expect(await ids('score=relevance&scoreMin=0.5&scoreMax=0.8')).toEqual([traces[2]]);
    expect(await ids('score=verdict&scoreValue=pass')).toEqual([traces[1]]);
    // Another workspace's scores of the same name never match here, nor ours there.
    const outsider = await ctx.tenant();
    await post(ctx, outsider, [{ traceId: traces[0], source: 'sdk', spans: [span({ spanId: 'root' })] }]);
    await postScores(ctx, outsider, { name: 'relevance', value: 0.99, traceId: traces[0] });
    expect(await ids('score=relevance&scoreMin=0.95')).toEqual([]);
    expect(
      ((await getJson(ctx, outsider, '/api/traces?score=relevance&scoreMin=0.5')).json().data as { traceId: string }[]).map(
        (t) => t.traceId,
      ),
    ).toEqual([traces[0]]);
    const bad = await getJson(ctx, tenant, '/api/traces?scoreMin=1');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('querystring.scoreMin');
  });

  it('pages a list filtered by a score in each order: offsets, cursors and totals', async () => {
    const scored = await ctx.tenant();
    // Seven traces a minute apart, durations out of start order; five with a `grade` of 0.5 or more.
    const recent = Date.now() - 3600_000;
    const traces = [3, 1, 4, 1.5, 5, 9, 2].map((seconds, i) => ({
      traceId: uniqueId(`p${i}`),
      start: new Date(recent + i * 60_000).toISOString(),
      seconds,
      grade: [0.9, 0.1, 0.6, 0.5, 0.95, 0.2, 0.7][i]!,
    }));
    await post(
      ctx,
      scored,
      traces.map((t) => ({
        traceId: t.traceId,
        source: 'sdk',
        spans: [
          span({
            spanId: 'root',
            startTime: t.start,
            endTime: new Date(Date.parse(t.start) + t.seconds * 1000).toISOString(),
            durationMs: t.seconds * 1000,
          }),
        ],
      })),
    );
    await postScores(ctx, scored, { scores: traces.map((t) => ({ name: 'grade', value: t.grade, traceId: t.traceId, spanId: 'root' })) });
    const matching = traces.filter((t) => t.grade >= 0.5);
    const orders = {
      '-startTime': [...matching].reverse(),
      startTime: matching,
      '-durationMs': [...matching].sort((a, b) => b.seconds - a.seconds),
      durationMs: [...matching].sort((a, b) => a.seconds - b.seconds),
    };
    for (const [sort, expected] of Object.entries(orders)) {
      const base = `/api/traces?score=grade&scoreMin=0.5&sort=${sort}&limit=2`;
      // Cursor pages: every match once, in order, the first page's total carried along.
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await getJson(ctx, scored, `${base}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json();
        expect(body.meta.pagination.total).toBe(matching.length);
        walked.push(...(body.data as { traceId: string; scores: Record<string, unknown> }[]).map((t) => t.traceId));
        cursor = body.meta.pagination.nextCursor;
      } while (cursor);
      expect(walked, sort).toEqual(expected.map((t) => t.traceId));
      // An offset page.
      const page = (await getJson(ctx, scored, `${base}&offset=3`)).json();
      expect(page.data.map((t: { traceId: string }) => t.traceId)).toEqual(expected.slice(3, 5).map((t) => t.traceId));
      expect(page.meta.pagination.total).toBe(matching.length);
    }
    const first = (await getJson(ctx, scored, '/api/traces?score=grade&scoreMin=0.5&limit=1')).json().data[0];
    expect(first.scores).toEqual({ grade: { n: 1, mean: 0.7 } });
  });
});

describe('GET /api/scores filters and pages', () => {
  let tenant: Tenant;
  const traceA = uniqueId('ta');
  const traceB = uniqueId('tb');
  const recent = { startTime: new Date(Date.now() - 60_000).toISOString(), endTime: new Date(Date.now() - 30_000).toISOString() };
  beforeAll(async () => {
    tenant = await ctx.tenant();
    await post(ctx, tenant, [
      {
        traceId: traceA,
        source: 'sdk',
        sessionId: 'sess-1',
        userId: 'user-1',
        spans: [span({ spanId: 'gen', kind: 'llm.chat', promptName: 'greeter', promptVersion: '1.0.0', ...recent })],
      },
      {
        traceId: traceB,
        source: 'sdk',
        userId: 'user-2',
        spans: [span({ spanId: 'gen', kind: 'llm.chat', promptName: 'greeter', promptVersion: '2.0.0', ...recent })],
      },
    ]);
    const minute = (m: number) => `2026-01-01T00:0${m}:00.000Z`;
    await postScores(ctx, tenant, {
      scores: [
        { id: 's1', name: 'q', value: 1, traceId: traceA, timestamp: minute(1) },
        { id: 's2', name: 'q', value: 3, traceId: traceA, spanId: 'gen', source: 'annotation', timestamp: minute(2) },
        { id: 's3', name: 'q', value: 5, traceId: traceB, spanId: 'gen', timestamp: minute(3) },
        { id: 's4', name: 'ok', value: false, traceId: traceB, timestamp: minute(4) },
        { id: 's5', name: 'session-q', value: 2, sessionId: 'sess-1', timestamp: minute(5) },
      ],
    });
  });
  const ids = async (query: string) => {
    const res = await getJson(ctx, tenant, `/api/scores?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { id: string }[]).map((s) => s.id);
  };

  it('filters by every field', async () => {
    expect(await ids('')).toEqual(['s5', 's4', 's3', 's2', 's1']);
    expect(await ids('name=q')).toEqual(['s3', 's2', 's1']);
    expect(await ids('source=annotation')).toEqual(['s2']);
    expect(await ids('dataType=boolean')).toEqual(['s4']);
    expect(await ids(`traceId=${traceA}`)).toEqual(['s2', 's1']);
    expect(await ids(`traceId=${traceA}&spanId=gen`)).toEqual(['s2']);
    expect(await ids('sessionId=sess-1')).toEqual(['s5', 's2', 's1']);
    expect(await ids('userId=user-2')).toEqual(['s4', 's3']);
    expect(await ids('minValue=2&maxValue=4')).toEqual(['s5', 's2']);
    expect(await ids('from=2026-01-01T00:02:00Z&to=2026-01-01T00:04:00Z')).toEqual(['s3', 's2']);
    expect(await ids('promptName=greeter')).toEqual(['s4', 's3', 's2', 's1']);
    expect(await ids('promptName=greeter&promptVersion=2.0.0')).toEqual(['s4', 's3']);
    expect(await ids('stringValue=false')).toEqual(['s4']);
    const bad = await getJson(ctx, tenant, '/api/scores?promptVersion=1&minValue=x');
    expect(
      bad
        .json()
        .error.details.issues.map((i: { path: string }) => i.path)
        .sort(),
    ).toEqual(['querystring.minValue']);
  });

  it('gives sessions and users the averages of their scores', async () => {
    const sessionAverages = { q: { n: 2, mean: 2 }, 'session-q': { n: 1, mean: 2 } };
    const sessions = (await getJson(ctx, tenant, '/api/sessions')).json().data;
    expect(sessions.find((x: { sessionId: string }) => x.sessionId === 'sess-1').scores).toEqual(sessionAverages);
    expect((await getJson(ctx, tenant, '/api/sessions/sess-1')).json().data.scores).toEqual(sessionAverages);
    const users = (await getJson(ctx, tenant, '/api/users')).json().data;
    const byUser = Object.fromEntries(users.map((u: { userId: string; scores: unknown }) => [u.userId, u.scores]));
    expect(byUser).toEqual({ 'user-1': { q: { n: 2, mean: 2 } }, 'user-2': { q: { n: 1, mean: 5 }, ok: { n: 1, mean: 0 } } });
    expect((await getJson(ctx, tenant, '/api/users/user-2')).json().data.scores).toEqual(byUser['user-2']);
  });

  it('walks cursor pages without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await getJson(ctx, tenant, `/api/scores?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...res.json().data.map((s: { id: string }) => s.id));
      cursor = res.json().meta.pagination.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['s5', 's4', 's3', 's2', 's1']);
    expect((await getJson(ctx, tenant, '/api/scores?cursor=garbage')).json().error.details.issues[0].path).toBe('querystring.cursor');
  });
});

describe('workspace isolation', () => {
  it('never lets another workspace read, correct, filter by or delete a score', async () => {
    const owner = await ctx.tenant();
    const other = await ctx.tenant();
    const traceId = uniqueId('t');
    await post(ctx, owner, [{ traceId, source: 'sdk', spans: [span({ spanId: 'root' })] }]);
    await post(ctx, other, [{ traceId, source: 'sdk', spans: [span({ spanId: 'root' })] }]);
    await postScores(ctx, owner, { id: 'shared-id', name: 'secret', value: 0.9, traceId });
    expect((await getJson(ctx, other, '/api/scores/shared-id')).statusCode).toBe(404);
    expect((await getJson(ctx, other, '/api/scores')).json().data).toEqual([]);
    expect((await getJson(ctx, other, '/api/traces?score=secret')).json().data).toEqual([]);
    expect((await getJson(ctx, other, `/api/traces/${traceId}`)).json().data.scores).toBeUndefined();
    expect((await ctx.app.inject({ method: 'DELETE', url: '/api/scores/shared-id', headers: other.headers })).statusCode).toBe(404);
    // The same id in another workspace is another score.
    await postScores(ctx, other, { id: 'shared-id', name: 'secret', value: 0.1, traceId });
    expect((await getJson(ctx, owner, '/api/scores/shared-id')).json().data.value).toBe(0.9);
    expect((await getJson(ctx, other, '/api/scores/shared-id')).json().data.value).toBe(0.1);
    await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${traceId}`, headers: other.headers });
    expect((await getJson(ctx, owner, '/api/scores/shared-id')).statusCode).toBe(200);
    const config = await ctx.app.inject({
      method: 'POST',
      url: '/api/score-configs',
      headers: owner.headers,
      payload: { name: 'secret', dataType: 'boolean' },
    });
    expect((await getJson(ctx, other, `/api/score-configs/${config.json().data.id}`)).statusCode).toBe(404);
    expect((await postScores(ctx, other, { name: 'secret', value: 0.5, traceId })).json().data.accepted).toBe(1);
  });
});

describe('GET /api/scores/analytics', () => {
  it('answers per name count, mean, median, distribution and buckets, from the known scores', async () => {
    const tenant = await ctx.tenant();
    const traceId = uniqueId('t');
    const at = (hour: number, minute = 0) => `2026-02-01T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00.000Z`;
    await postScores(ctx, tenant, {
      scores: [
        { name: 'q', value: 1, traceId, timestamp: at(10) },
        { name: 'q', value: 2, traceId, timestamp: at(10, 30) },
        { name: 'q', value: 6, traceId, timestamp: at(11) },
        { name: 'q', value: 7, traceId, timestamp: at(11, 5) },
        { name: 'ok', value: true, traceId, timestamp: at(10) },
        { name: 'ok', value: false, traceId, timestamp: at(10) },
        { name: 'ok', value: true, traceId, timestamp: at(12) },
        { name: 'tone', value: 'polite', traceId, timestamp: at(10) },
        { name: 'tone', value: 'rude', traceId, timestamp: at(10) },
        { name: 'tone', value: 'polite', traceId, timestamp: at(13) },
        { name: 'q', value: 100, traceId, timestamp: at(14) },
      ],
    });
    const res = await getJson(ctx, tenant, `/api/scores/analytics?from=${at(0)}&to=${at(14)}&interval=hour`);
    expect(res.statusCode, res.body).toBe(200);
    const byName = Object.fromEntries(res.json().data.scores.map((s: { name: string }) => [s.name, s]));
    expect(byName.q).toMatchObject({ dataType: 'numeric', count: 4, mean: 4, p50: 4, distribution: null });
    expect(byName.q.overTime).toEqual([
      { bucket: at(10), count: 2, mean: 1.5 },
      { bucket: at(11), count: 2, mean: 6.5 },
    ]);
    expect(byName.ok).toMatchObject({ dataType: 'boolean', count: 3, p50: null, distribution: { true: 2, false: 1 } });
    expect(byName.ok.mean).toBeCloseTo(2 / 3, 12);
    expect(byName.tone).toMatchObject({ dataType: 'categorical', count: 3, distribution: { polite: 2, rude: 1 } });
    const day = (await getJson(ctx, tenant, `/api/scores/analytics?from=${at(0)}&to=${at(23)}&name=q`)).json().data;
    expect(day.scores).toHaveLength(1);
    expect(day.scores[0].overTime).toEqual([{ bucket: '2026-02-01T00:00:00.000Z', count: 5, mean: 116 / 5 }]);
    const other = await ctx.tenant();
    expect((await getJson(ctx, other, `/api/scores/analytics?from=${at(0)}&to=${at(23)}`)).json().data.scores).toEqual([]);
  });
});

describe('session, user and stats group averages in a workspace that had no score', () => {
  let tenant: Tenant;
  const traceId = uniqueId('t');
  const recent = { startTime: new Date(Date.now() - 60_000).toISOString(), endTime: new Date(Date.now() - 30_000).toISOString() };
  beforeAll(async () => {
    tenant = await ctx.tenant();
    await post(ctx, tenant, [
      { traceId, source: 'sdk', sessionId: 'sess-first', userId: 'user-first', spans: [span({ spanId: 'gen', ...recent })] },
    ]);
  });
  const read = async () => {
    const sessions = (await getJson(ctx, tenant, '/api/sessions')).json().data as { sessionId: string; scores?: unknown }[];
    const users = (await getJson(ctx, tenant, '/api/users')).json().data as { userId: string; scores?: unknown }[];
    return {
      sessions: sessions.map((s) => [s.sessionId, s.scores]),
      session: (await getJson(ctx, tenant, '/api/sessions/sess-first')).json().data.scores,
      users: users.map((u) => [u.userId, u.scores]),
      user: (await getJson(ctx, tenant, '/api/users/user-first')).json().data.scores,
      stats: ((await getJson(ctx, tenant, '/api/traces/stats?groupBy=user')).json().data.groups as { key: string; scores: unknown }[]).map(
        (g) => [g.key, g.scores],
      ),
    };
  };

  it('carries the averages from the first score on, and none once it is deleted', async () => {
    const none = { sessions: [['sess-first', undefined]], session: undefined, users: [['user-first', undefined]], user: undefined };
    expect(await read()).toEqual({ ...none, stats: [['user-first', {}]] });
    const [id] = (await postScores(ctx, tenant, { name: 'first', value: 0.5, traceId })).json().data.ids;
    const averages = { first: { n: 1, mean: 0.5 } };
    expect(await read()).toEqual({
      sessions: [['sess-first', averages]],
      session: averages,
      users: [['user-first', averages]],
      user: averages,
      stats: [['user-first', averages]],
    });
    await ctx.app.inject({ method: 'DELETE', url: `/api/scores/${id}`, headers: tenant.headers });
    expect(await read()).toEqual({ ...none, stats: [['user-first', {}]] });
  });
});
