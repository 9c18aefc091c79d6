import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderClickhouseMigration, splitStatements } from '../../src/stores/clickhouse-ddl.js';

const dir = new URL('../../clickhouse/', import.meta.url);
const files = readdirSync(dir)
  .filter((f) => /^\d+_.*\.sql$/.test(f))
  .sort();
const statements = files.flatMap((f) => splitStatements(readFileSync(new URL(f, dir), 'utf8')));
const render = (options: { cluster?: string; retentionDays?: number }) =>
  statements.flatMap((s) => renderClickhouseMigration(s, { database: 'loupe', ...options }));

describe('ClickHouse migrations on one node', () => {
  const sql = render({});

  it('leaves no placeholder behind, in any mode', () => {
    for (const text of [...sql, ...render({ cluster: 'main', retentionDays: 30 })]) expect(text).not.toMatch(/\{\{|\}\}/);
  });

  it('creates plain ReplacingMergeTree tables keyed by identity only, without TTL', () => {
    const spans = sql.find((s) => s.includes('CREATE TABLE IF NOT EXISTS spans '))!;
    expect(spans).toContain('ENGINE = ReplacingMergeTree(version, is_deleted)');
    expect(spans).toContain('ORDER BY (workspace_id, trace_id, span_id)');
    expect(spans).not.toContain('TTL');
    expect(spans).not.toContain('ON CLUSTER');
    const traces = sql.find((s) => s.includes('CREATE TABLE IF NOT EXISTS traces '))!;
    expect(traces).toContain('ORDER BY (workspace_id, trace_id)');
    expect(sql.some((s) => s.includes('Distributed'))).toBe(false);
  });

  it('creates the deduplicating views and indexes on the tables themselves', () => {
    expect(sql).toContainEqual(
      expect.stringMatching(
        /^CREATE VIEW IF NOT EXISTS spans_latest\s+AS\s+SELECT \* EXCEPT \(is_deleted\) FROM spans FINAL WHERE is_deleted = 0$/,
      ),
    );
    expect(sql).toContainEqual(expect.stringMatching(/^CREATE VIEW IF NOT EXISTS traces_latest\s+AS/));
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE traces\s+ADD INDEX IF NOT EXISTS idx_session_id/));
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE spans\s+ADD INDEX IF NOT EXISTS idx_session_id/));
  });

  it('changes columns of the tables themselves only and backfills with frozen expressions', () => {
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE spans\s+ADD COLUMN IF NOT EXISTS detail String/));
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE traces\s+ADD COLUMN IF NOT EXISTS item String/));
    // Migration 0003's backfill is text of its own: the list item of that release, which has
    // neither the trace's service nor its user (migration 0004), whatever the code writes now.
    const backfill = sql.find((s) => /^ALTER TABLE traces\s+UPDATE item = /.test(s))!;
    expect(backfill).toContain(`concat('"environment":', if(environment = '', 'null', toJSONString(environment))), concat('"status":'`);
    expect(backfill).not.toContain('"userId":');
    // No Distributed table on one node, so no ALTER of one (0003: two ADD and two MODIFY; 0004: one ADD per table;
    // 0005: traces.ttfts; 0006: one ADD on traces; 0008: one ADD of the two map columns; 0016: expires_at on each).
    expect(sql.filter((s) => /^ALTER TABLE (spans|traces)\s+(ADD|MODIFY) COLUMN/.test(s))).toHaveLength(11);
  });

  it('refuses SQL taken from live code: a migration is frozen text', () => {
    expect(() => renderClickhouseMigration('ALTER TABLE t UPDATE a = {{sql:traceItem}} WHERE 1', { database: 'loupe' })).toThrow(
      'migrations are frozen text',
    );
  });

  it('adds the retention TTL when LOUPE_RETENTION_DAYS is set', () => {
    const withTtl = render({ retentionDays: 30 });
    for (const table of ['spans', 'traces']) {
      expect(withTtl.find((s) => s.includes(`CREATE TABLE IF NOT EXISTS ${table} `))).toContain(
        'TTL toDateTime(start_time) + INTERVAL 30 DAY',
      );
    }
  });
});

describe('ClickHouse migrations on a cluster', () => {
  const sql = render({ cluster: 'main', retentionDays: 7 });

  it('creates replicated shard tables ON CLUSTER with a Distributed table in front, sharded by trace', () => {
    for (const [table, args] of [
      ['spans', 'version, is_deleted'],
      ['traces', 'version, is_deleted'],
    ] as const) {
      const local = sql.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table}_local ON CLUSTER main`))!;
      expect(local).toContain(
        `ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/loupe/${table}_local', '{replica}', ${args})`,
      );
      expect(local).toContain('TTL toDateTime(start_time) + INTERVAL 7 DAY');
      const distributed = sql.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER main`))!;
      expect(distributed).toBe(
        `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER main AS ${table}_local ENGINE = Distributed(main, loupe, ${table}_local, sipHash64(trace_id))`,
      );
      // The shard table comes first: the Distributed one copies its structure.
      expect(sql.indexOf(local)).toBeLessThan(sql.indexOf(distributed));
    }
  });

  it('creates views over the Distributed tables and ALTERs the shard tables, all ON CLUSTER', () => {
    expect(sql).toContainEqual(
      expect.stringMatching(
        /^CREATE VIEW IF NOT EXISTS spans_latest ON CLUSTER main AS\s+SELECT \* EXCEPT \(is_deleted\) FROM spans FINAL/,
      ),
    );
    expect(sql).toContainEqual(expect.stringMatching(/^CREATE VIEW IF NOT EXISTS traces_latest ON CLUSTER main AS/));
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE traces_local ON CLUSTER main ADD INDEX IF NOT EXISTS idx_session_id/));
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE spans_local ON CLUSTER main ADD INDEX IF NOT EXISTS idx_session_id/));
    // An INSERT … SELECT (a backfill) takes no ON CLUSTER: it runs once, through the Distributed tables.
    expect(sql.filter((s) => !s.includes('ON CLUSTER main') && !s.startsWith('INSERT INTO '))).toEqual([]);
  });

  // The tables copied from `traces` by a view, each keyed by what it is read by (0009, 0011).
  it.each([
    { table: 'session_traces', engineArgs: ', version, is_deleted', column: 'session_id' },
    { table: 'user_traces', engineArgs: '', column: 'user_id' },
  ])(
    "copies each shard's summaries with a $column to its own $table rows, and backfills once through the Distributed tables",
    ({ table, engineArgs, column }) => {
      const local = sql.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS ${table}_local ON CLUSTER main`))!;
      expect(local).toContain(
        `ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/loupe/${table}_local', '{replica}'${engineArgs})`,
      );
      expect(local).toContain(`ORDER BY (workspace_id, ${column}, trace_id)`);
      expect(sql).toContain(
        `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER main AS ${table}_local ENGINE = Distributed(main, loupe, ${table}_local, sipHash64(trace_id))`,
      );
      expect(sql).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^CREATE MATERIALIZED VIEW IF NOT EXISTS ${table}_mv ON CLUSTER main TO ${table}_local AS\\s+SELECT [^]*FROM traces_local\\s+WHERE ${column} != ''$`,
          ),
        ),
      );
      expect(sql).toContainEqual(
        expect.stringMatching(new RegExp(`^INSERT INTO ${table} \\([^]*FROM traces FINAL\\s+WHERE is_deleted = 0 AND ${column} != ''$`)),
      );
    },
  );

  it('changes columns on both the shard table and the Distributed table, and mutates the shard table only', () => {
    for (const [table, column] of [
      ['spans', 'detail'],
      ['traces', 'item'],
    ] as const) {
      expect(sql).toContainEqual(
        expect.stringMatching(new RegExp(`^ALTER TABLE ${table}_local ON CLUSTER main ADD COLUMN IF NOT EXISTS ${column} `)),
      );
      expect(sql).toContainEqual(
        expect.stringMatching(new RegExp(`^ALTER TABLE ${table} ON CLUSTER main ADD COLUMN IF NOT EXISTS ${column} `)),
      );
      expect(sql).toContainEqual(expect.stringMatching(new RegExp(`^ALTER TABLE ${table}_local ON CLUSTER main UPDATE ${column} = `)));
      expect(sql).not.toContainEqual(expect.stringMatching(new RegExp(`^ALTER TABLE ${table} ON CLUSTER main UPDATE`)));
    }
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE spans ON CLUSTER main\s+MODIFY COLUMN input String ALIAS/));
    expect(sql).toContainEqual(expect.stringMatching(/^ALTER TABLE spans_local ON CLUSTER main\s+MODIFY COLUMN input String ALIAS/));
  });
});
