import { describe, expect, it } from 'vitest';
import { bucketStarts, resolveRange, type AnalyticsRange } from '../../src/traces/query/analytics.js';
import { analyticsQuerySchema, statsQuerySchema } from '../../src/traces/model/wire/analytics-schemas.js';
import { selectAnalyticsTotals, selectCostBreakdown, selectStats } from '../../src/traces/tables/traces-table.js';

const squash = (sql: string) => sql.replace(/\s+/g, ' ').trim();
/** The statement GET /api/traces/stats runs for a query string (stats.ts), and the values it binds besides the workspace and limit. */
const stats = (querystring: Record<string, string>) => {
  const { groupBy, from, to, sessionId, limit } = statsQuerySchema.parse(querystring);
  const common = { workspaceId: 'ws', filter: { startFrom: from, startBefore: to, sessionId }, limit };
  const grouping =
    groupBy === 'model' || groupBy === 'provider' || groupBy === 'kind'
      ? { dimension: groupBy }
      : groupBy === 'score'
        ? { scoreNames: { sql: 'SELECT trace_id, name AS key FROM scores', values: {} } }
        : { field: groupBy };
  const { query, values } = selectStats.sql({ ...common, grouping });
  const { workspaceId: _workspaceId, limit: _limit, ...params } = values;
  return { query, params };
};
const totals = (range: AnalyticsRange) =>
  selectAnalyticsTotals.sql({
    workspaceId: 'ws',
    filter: { startAfter: range.startAfter, startBefore: range.startBefore },
    interval: range.interval,
    budget: 0,
    projectionFactor: range.projectionFactor,
  });

describe('compileStatsQuery', () => {
  for (const dimension of ['model', 'provider', 'kind'] as const) {
    it(`sums the per-trace ${dimension} groups of the summaries`, () => {
      const { query, params } = stats({ groupBy: dimension });
      const sql = squash(query);
      expect(sql).toContain(
        "SELECT nullIf(toString(g.key), '') AS key, count() AS traceCount, sum(g.spans) AS spanCount, sum(g.errors) AS errorCount",
      );
      expect(sql).toContain(
        `FROM traces FINAL ARRAY JOIN by_${dimension} AS g WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 GROUP BY g.key`,
      );
      expect(sql).toContain('sum(g.cost_usd) AS costUsd');
      expect(sql).toContain('quantilesExactInclusiveArray(0.5, 0.95, 0.99)(g.durations)');
      expect(sql).toMatch(/GROUP BY g.key ORDER BY costUsd DESC, traceCount DESC, key ASC NULLS LAST LIMIT \{limit:UInt32\}$/);
      expect(sql).not.toContain('FROM spans');
      expect(params).toEqual({});
    });
  }

  it('groups trace summaries by source', () => {
    const sql = squash(stats({ groupBy: 'source' }).query);
    expect(sql).toContain("SELECT nullIf(source, '') AS key");
    expect(sql).toContain('FROM traces FINAL WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 GROUP BY key');
    expect(sql).toContain("countIf(status = 'error') AS errorCount");
    expect(sql).toContain('quantilesExactInclusive(0.5, 0.95, 0.99)(duration_ms)');
    expect(sql).not.toContain('ARRAY JOIN');
  });

  it('filters the range half-open on the trace start and the session, as parameters only', () => {
    const query = { from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00+02:00', sessionId: "s'1" };
    const where =
      "AND start_time >= {startFrom:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')} AND session_id = {sessionId:String}";
    for (const groupBy of ['source', 'model', 'score']) {
      const compiled = stats({ groupBy, ...query });
      expect(squash(compiled.query)).toContain(where);
      expect(compiled.params).toEqual({
        startFrom: '2026-03-01 00:00:00.000000',
        startBefore: '2026-03-01 22:00:00.000000',
        sessionId: "s'1",
      });
      expect(compiled.query).not.toContain("s'1");
    }
  });
});

describe('analytics queries', () => {
  const range = resolveRange(
    { startAfter: '2026-03-01T00:00:00Z', startBefore: '2026-03-04T00:00:00Z' },
    Date.parse('2026-04-01T00:00:00Z'),
  );

  it('computes totals and buckets in one pass with GROUPING SETS', () => {
    const sql = squash(totals(range).query);
    expect(sql).toContain('toUnixTimestamp(toStartOfDay(start_time)) AS bucket');
    expect(sql).toContain('GROUP BY GROUPING SETS ((), (bucket))');
    expect(sql).toContain(
      "FROM traces FINAL WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}",
    );
    expect(sql).toContain('quantilesExactInclusive(0.5, 0.9, 0.95, 0.99)(duration_ms)');
    expect(sql).toContain('costUsd * {projectionFactor:Float64} AS projectedUsd');
    const hourly = resolveRange({ startAfter: '2026-03-01T00:00:00Z', startBefore: '2026-03-02T00:00:00Z' }, 0);
    expect(squash(totals(hourly).query)).toContain('toUnixTimestamp(toStartOfHour(start_time)) AS bucket');
  });

  it("breaks cost down by three dimensions in one query over the summaries' span groups", () => {
    const sql = squash(
      selectCostBreakdown.sql({ workspaceId: 'ws', filter: { startAfter: range.startAfter, startBefore: range.startBefore } }).query,
    );
    for (const d of ['model', 'provider', 'kind']) {
      expect(sql).toContain(
        `SELECT '${d}' AS dimension, nullIf(toString(k), '') AS key, sum(c) AS costUsd FROM traces FINAL ARRAY JOIN by_${d}.key AS k, by_${d}.cost_usd AS c WHERE`,
      );
    }
    expect(sql.match(/UNION ALL/g)).toHaveLength(2);
    expect(sql).toContain('costUsd / sum(costUsd) OVER (PARTITION BY dimension)');
  });
});

describe('resolveRange and bucketStarts', () => {
  const now = Date.parse('2026-03-20T12:34:56Z');

  it('defaults to the last 30 days with daily buckets', () => {
    const range = resolveRange({}, now);
    expect(range).toEqual({
      startAfter: '2026-02-18T12:34:56.000Z',
      startBefore: '2026-03-20T12:34:56.000Z',
      interval: 'day',
      projectionFactor: 1,
    });
    expect(bucketStarts(range)).toHaveLength(31);
  });

  it('uses hourly buckets up to two days and projects over the elapsed part', () => {
    const range = resolveRange(
      { startAfter: '2026-03-20T00:00:00Z', startBefore: '2026-03-21T00:00:00Z' },
      Date.parse('2026-03-20T06:00:00Z'),
    );
    expect(range.interval).toBe('hour');
    expect(range.projectionFactor).toBe(4);
    expect(bucketStarts(range)).toHaveLength(24);
    expect(resolveRange({ startAfter: '2026-03-25T00:00:00Z', startBefore: '2026-03-26T00:00:00Z' }, now).projectionFactor).toBe(1);
  });

  it('ends an open range now', () => {
    expect(resolveRange({ startAfter: '2026-03-19T12:34:56Z' }, now)).toMatchObject({
      startBefore: '2026-03-20T12:34:56.000Z',
      interval: 'hour',
    });
  });
});

describe('query schemas', () => {
  it('refuses other groupings, reversed ranges and negative budgets', () => {
    expect(statsQuerySchema.safeParse({ groupBy: 'environment' }).success).toBe(false);
    const reversed = statsQuerySchema.safeParse({ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' });
    expect(reversed.error?.issues[0]?.path).toEqual(['from']);
    expect(analyticsQuerySchema.safeParse({ budget: '-0.01' }).success).toBe(false);
    expect(analyticsQuerySchema.parse({ budget: '12.5' })).toEqual({ budget: 12.5 });
    expect(analyticsQuerySchema.safeParse({ budget: '' }).success).toBe(false);
    expect(analyticsQuerySchema.safeParse({ budget: 'Infinity' }).success).toBe(false);
  });
});
