import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';
import { loadSqlFixtures, sql, sqlRows } from './sql-fixtures.js';

let ctx: TestContext;
let tenant: Tenant;
let other: Tenant;
const app_sql = (body: Record<string, unknown>) => sql(ctx.app, tenant, body);

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  other = await ctx.tenant();
  await loadSqlFixtures(ctx, tenant, other);
});
afterAll(async () => {
  await ctx?.close();
});

describe('POST /api/sql', () => {
  it('answers columns with their types, rows and statistics', async () => {
    const res = await sql(ctx.app, tenant, { query: 'SELECT trace_id, status, span_count FROM traces ORDER BY trace_id' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.columns).toEqual([
      { name: 'trace_id', type: 'String' },
      { name: 'status', type: 'LowCardinality(String)' },
      { name: 'span_count', type: 'UInt32' },
    ]);
    expect(body.data.rows).toEqual([
      ['t1', 'completed', 3],
      ['t2', 'error', 3],
      ['t3', 'completed', 1],
      ['t4', 'running', 1],
    ]);
    expect(body.meta.rowCount).toBe(4);
    expect(body.meta.statistics.rowsRead).toBeGreaterThan(0);
    expect(body.meta.statistics.bytesRead).toBeGreaterThan(0);
    expect(body.meta.statistics.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('gives the same figures as the REST API: cost and tokens per model, over generation spans', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/traces/stats?groupBy=model', headers: tenant.headers });
    expect(res.statusCode).toBe(200);
    const rest = res.json().data.groups as Array<{ key: string; costUsd: number; totalTokens: number; spanCount: number }>;
    const rows = await sqlRows(
      ctx.app,
      tenant,
      `SELECT model, count() AS spans, sum(total_tokens) AS tokens, round(sum(cost_usd), 6) AS cost
       FROM spans WHERE model != '' AND startsWith(kind, 'llm.') GROUP BY model ORDER BY cost DESC`,
    );
    // T3's agent span counts in the REST figures (a trace without generation spans): add it by hand.
    expect(rows).toEqual([
      { model: 'gpt-4o', spans: 1, tokens: 100, cost: 0.5 },
      { model: 'claude', spans: 1, tokens: 50, cost: 0.25 },
      { model: 'gpt-4o-mini', spans: 1, tokens: 10, cost: 0.01 },
    ]);
    const byKey = Object.fromEntries(rest.map((g) => [g.key, g]));
    expect(byKey['gpt-4o']!.costUsd).toBeCloseTo(0.5 + 0.1, 9);
    expect(byKey['claude']!.costUsd).toBeCloseTo(0.25, 9);
    expect(byKey['gpt-4o-mini']!.costUsd).toBeCloseTo(0.01, 9);
    const traces = await sqlRows(
      ctx.app,
      tenant,
      'SELECT round(sum(cost_usd), 6) AS cost, sum(total_tokens) AS tokens, count() AS traces FROM traces',
    );
    const analytics = await ctx.app.inject({
      method: 'GET',
      url: '/api/traces/analytics?startAfter=2026-01-01T00:00:00Z&startBefore=2026-04-01T00:00:00Z',
      headers: tenant.headers,
    });
    const totals = analytics.json().data.totals;
    expect(traces[0]!.cost).toBeCloseTo(totals.costUsd, 9);
    expect(traces[0]!.tokens).toBe(totals.totalTokens);
    expect(traces[0]!.traces).toBe(totals.traceCount);
  });

  it('answers ORDER BY … LIMIT over the views (lazy materialization of the engine is off: it loses columns there)', async () => {
    const rows = await sqlRows(ctx.app, tenant, 'SELECT trace_id, span_count FROM traces ORDER BY trace_id LIMIT 2');
    expect(rows).toEqual([
      { trace_id: 't1', span_count: 3 },
      { trace_id: 't2', span_count: 3 },
    ]);
    const spans = await sqlRows(ctx.app, tenant, 'SELECT trace_id, span_id, name FROM spans ORDER BY start_time DESC LIMIT 1');
    expect(spans).toEqual([{ trace_id: 't4', span_id: 'x', name: 'llm.completion x' }]);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/api/sql'].post.requestBody).toBeDefined();
    expect(Object.keys(doc.paths['/api/sql'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '422', '429']));
  });

  it('answers sessions and users with the figures of GET /api/sessions and GET /api/users', async () => {
    const window = 'startAfter=2026-01-01T00:00:00Z&startBefore=2026-04-01T00:00:00Z';
    const rest = await ctx.app.inject({ method: 'GET', url: `/api/sessions?${window}`, headers: tenant.headers });
    expect(rest.statusCode, rest.body).toBe(200);
    const s1 = (rest.json().data as Array<Record<string, unknown>>).find((s) => s.sessionId === 's1')!;
    const [session] = await sqlRows(ctx.app, tenant, "SELECT * FROM sessions WHERE session_id = 's1'");
    expect(session).toMatchObject({
      trace_count: s1.traceCount,
      user_ids: s1.userIds,
      input_tokens: s1.inputTokens,
      output_tokens: s1.outputTokens,
      total_tokens: s1.totalTokens,
      error_count: s1.errorCount,
      trace_error_count: s1.traceErrorCount,
      duration_ms: s1.durationMs,
    });
    expect(session!.cost_usd).toBeCloseTo(s1.costUsd as number, 9);
    const users = await ctx.app.inject({ method: 'GET', url: `/api/users?${window}`, headers: tenant.headers });
    expect(users.statusCode, users.body).toBe(200);
    const restUsers = (users.json().data as Array<Record<string, unknown>>).sort((a, b) =>
      String(a.userId).localeCompare(String(b.userId)),
    );
    const sqlUsers = await sqlRows(
      ctx.app,
      tenant,
      'SELECT user_id, trace_count, session_count, round(cost_usd, 6) AS cost, error_count FROM users ORDER BY user_id',
    );
    expect(sqlUsers).toEqual(
      restUsers.map((u) => ({
        user_id: u.userId,
        trace_count: u.traceCount,
        session_count: u.sessionCount,
        cost: u.costUsd,
        error_count: u.errorCount,
      })),
    );
    expect(sqlUsers).toHaveLength(2);
  });

  it('deduplicates re-sent spans and hides deleted traces', async () => {
    const rows = await sqlRows(ctx.app, tenant, "SELECT count() AS n, countIf(trace_id = 't5') AS deleted FROM spans");
    expect(rows).toEqual([{ n: 8, deleted: 0 }]);
  });

  it('reads attributes and metadata as maps, nested values as their JSON text', async () => {
    const rows = await sqlRows(
      ctx.app,
      tenant,
      `SELECT trace_id, attributes['gen_ai.request.model'] AS model, attributes['user.id'] AS user,
              attributes['gen_ai.request.temperature'] AS temperature, attributes['nested'] AS nested, metadata['team'] AS team
       FROM spans WHERE mapContains(attributes, 'user.id') ORDER BY trace_id`,
    );
    expect(rows).toEqual([
      { trace_id: 't1', model: 'gpt-4o', user: 'u-1', temperature: '0.2', nested: '{"a":[1,"x"]}', team: 'support' },
      { trace_id: 't2', model: 'claude', user: 'u-2', temperature: '', nested: '', team: '' },
    ]);
    const types = (await sql(ctx.app, tenant, { query: 'SELECT attributes, metadata FROM spans LIMIT 1' })).json().data.columns;
    expect(types).toEqual([
      { name: 'attributes', type: 'Map(LowCardinality(String), String)' },
      { name: 'metadata', type: 'Map(LowCardinality(String), String)' },
    ]);
  });

  it('keeps the span wire shape of the REST API as it was', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/traces/t1', headers: tenant.headers });
    const llm = res.json().data.spans.find((s: { spanId: string }) => s.spanId === 'b');
    expect(llm.attributes).toEqual({
      'gen_ai.request.model': 'gpt-4o',
      'user.id': 'u-1',
      'gen_ai.request.temperature': 0.2,
      nested: { a: [1, 'x'] },
    });
    expect(llm.metadata).toEqual({ team: 'support' });
  });

  it('answers 400 naming the parameter for numbers JSON cannot hold exactly and for nesting too deep', async () => {
    const huge = await app_sql({ query: 'SELECT {n:UInt64} AS n', parameters: { n: 18446744073709551616 } });
    expect(huge.statusCode, huge.body).toBe(400);
    expect(huge.json().error.details.issues ?? huge.json().error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining('parameters.n') })]),
    );
    const inf = await app_sql({ query: 'SELECT {n:UInt64} AS n', parameters: { n: 1e308 } });
    expect(inf.statusCode, inf.body).toBe(400);
    expect(inf.body).toContain('send it as a string');
    // As a string, the engine reads the whole integer.
    expect(await sqlRows(ctx.app, tenant, 'SELECT toString({n:UInt64}) AS n', { n: '18446744073709551615' })).toEqual([
      { n: '18446744073709551615' },
    ]);
    // Written as text: JSON.stringify itself would overflow on it.
    const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    const nested = await ctx.app.inject({
      method: 'POST',
      url: '/api/sql',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: `{"query":"SELECT {a:Array(UInt8)} AS a","parameters":{"a":${deep}}}`,
    });
    expect(nested.statusCode, nested.body.slice(0, 300)).toBe(400);
    expect(nested.body).toContain('nests deeper than 8 levels');
    expect(nested.body).toContain('parameters.a');
    // A Map parameter, from a JSON object.
    expect(await sqlRows(ctx.app, tenant, "SELECT {m:Map(String, UInt8)}['b'] AS v", { m: { a: 1, b: 2 } })).toEqual([{ v: 2 }]);
    // A key the validator would leave out is refused, naming it, never dropped in silence.
    const proto = await ctx.app.inject({
      method: 'POST',
      url: '/api/sql',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: '{"query":"SELECT length(mapKeys({m:Map(String, UInt8)})) AS n","parameters":{"m":{"a":1,"__proto__":2}}}',
    });
    expect(proto.statusCode, proto.body).toBe(400);
    expect(proto.body).toContain('parameters.m.__proto__');
  });

  it('binds parameters as typed values', async () => {
    const rows = await sqlRows(
      ctx.app,
      tenant,
      'SELECT trace_id FROM traces WHERE status = {status:String} AND start_time >= {since:DateTime64(3)} AND trace_id IN {ids:Array(String)} ORDER BY trace_id',
      { status: 'completed', since: '2026-03-01 00:00:00', ids: ['t1', 't3', "t1' OR 1=1 --"] },
    );
    expect(rows).toEqual([{ trace_id: 't1' }, { trace_id: 't3' }]);
    const injected = await sqlRows(ctx.app, tenant, 'SELECT count() AS n FROM traces WHERE trace_id = {id:String}', {
      id: "t1' OR 1=1 --",
    });
    expect(injected).toEqual([{ n: 0 }]);
    const missing = await sql(ctx.app, tenant, { query: 'SELECT {nope:String} AS x' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.message).toMatch(/nope/);
    const reserved = await sql(ctx.app, tenant, { query: 'SELECT 1', parameters: { __loupe_workspace: 'x' } });
    expect(reserved.statusCode).toBe(400);
  });

  it('exports CSV, JSON lines and Parquet that parse back to the same rows', async () => {
    const query = 'SELECT trace_id, span_count, cost_usd FROM traces ORDER BY trace_id';
    const expected = (await sqlRows(ctx.app, tenant, query)) as Array<{ trace_id: string; span_count: number; cost_usd: number | null }>;
    expect(expected).toHaveLength(4);

    const csv = await sql(ctx.app, tenant, { query, format: 'csv' });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toBe('attachment; filename="loupe-query.csv"');
    expect(Number(csv.headers['x-loupe-rows-read'])).toBeGreaterThan(0);
    const [header, ...lines] = csv.body.trim().split('\n');
    expect(header).toBe('"trace_id","span_count","cost_usd"');
    expect(lines.map((l) => l.split(','))).toEqual(
      expected.map((r) => [`"${r.trace_id}"`, String(r.span_count), r.cost_usd === null ? '\\N' : String(r.cost_usd)]),
    );

    const jsonl = await sql(ctx.app, tenant, { query, format: 'jsonl' });
    expect(jsonl.statusCode).toBe(200);
    expect(jsonl.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(
      jsonl.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(expected);

    const parquet = await sql(ctx.app, tenant, { query, format: 'parquet' });
    expect(parquet.statusCode).toBe(200);
    expect(parquet.headers['content-disposition']).toBe('attachment; filename="loupe-query.parquet"');
    const bytes = parquet.rawPayload;
    const objects = await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    });
    expect(objects.map((o) => ({ trace_id: o.trace_id, span_count: Number(o.span_count), cost_usd: o.cost_usd ?? null }))).toEqual(
      expected,
    );
  });

  it('answers the examples of clickhouse/README.md', async () => {
    const p95 = await sqlRows(
      ctx.app,
      tenant,
      `SELECT model, count() AS calls, quantileExact(0.95)(duration_ms) AS p95_ms FROM spans
       WHERE startsWith(kind, 'llm.') GROUP BY model ORDER BY model`,
    );
    expect(p95).toEqual([
      { model: 'claude', calls: 1, p95_ms: 400 },
      { model: 'gpt-4o', calls: 1, p95_ms: 200 },
      { model: 'gpt-4o-mini', calls: 1, p95_ms: 80 },
    ]);
    const perUser = await sqlRows(
      ctx.app,
      tenant,
      `SELECT attributes['user.id'] AS user, toDate(start_time) AS day, round(sum(cost_usd), 6) AS cost
       FROM spans WHERE startsWith(kind, 'llm.') AND user != '' GROUP BY user, day ORDER BY user, day`,
    );
    expect(perUser).toEqual([
      { user: 'u-1', day: '2026-03-01', cost: 0.5 },
      { user: 'u-2', day: '2026-03-01', cost: 0.25 },
    ]);
    const perUserTraces = await sqlRows(
      ctx.app,
      tenant,
      `SELECT user_id, toDate(start_time) AS day, count() AS traces, round(sum(cost_usd), 6) AS cost, any(tags) AS tags
       FROM traces WHERE user_id != '' GROUP BY user_id, day ORDER BY user_id`,
    );
    expect(perUserTraces).toEqual([
      { user_id: 'u-1', day: '2026-03-01', traces: 1, cost: 0.5, tags: ['beta', 'support'] },
      { user_id: 'u-2', day: '2026-03-01', traces: 1, cost: 0.25, tags: [] },
    ]);
    const failingTools = await sqlRows(
      ctx.app,
      tenant,
      `SELECT name, count() AS calls, countIf(status = 'error') AS errors, anyIf(status_message, status = 'error') AS example
       FROM spans WHERE kind = 'tool' GROUP BY name HAVING errors > 0 ORDER BY errors DESC`,
    );
    expect(failingTools).toEqual([{ name: 'tool c', calls: 2, errors: 1, example: 'lookup timed out' }]);
  });
});
