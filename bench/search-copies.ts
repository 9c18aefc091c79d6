/**
 * A large search store built inside the engine (`npm run bench -- search --copies`): the search
 * benchmark's traces go through the service's own ingest once, as a template of
 * `templateTraces` traces in a workspace of their own; the engine then copies the template's
 * rows into the bench workspace with INSERT … SELECT over `numbers()`, each copy under new
 * trace ids, into the same tables the reads use: `spans` and the summaries in `traces`, whose
 * materialized views fill the session and user indexes as an ingest's summaries do. The
 * template's rows are deleted before the copies, while the tables are small.
 *
 * How the store differs from one loaded through the API, and why reads still see a correct one:
 * - every copied row is a row the service wrote (same columns, detail, summary, versions): only
 *   `trace_id` changes (and the list item's `traceId` inside `item`), so each trace's summary
 *   still describes its spans;
 * - a copy keeps its template trace's times and texts: the traces repeat every `templateTraces`
 *   with new ids, so the rare word is in one trace of 10,007 at any size, the common word in
 *   every trace and the pair in about one in seven, as through the API; the copy number leads
 *   the trace id, so rows of one copy sort together and a text's repeats are a whole copy apart
 *   (no compression window sees them twice);
 * - copies of a trace share its start time: the list's order breaks the tie by trace id;
 * - the engine writes a copy batch as a few large parts, not the many small flushes of an
 *   ingest: the merges that follow are fewer, and the ingest path's own costs (parsing, the
 *   write-ahead log, summaries) are not paid. Ingest is measured by `--ingest-spans`, not here.
 */
import type { ClickHouseClient } from '../src/stores/clickhouse.js';

/** The template's size: one trace holds the rare word (trace numbers multiple of 10,007). */
export const templateTraces = 10_007;

/** The copied tables; `item` (the list item's JSON) names the trace id. */
const copiedTables = [
  { table: 'spans', item: false },
  { table: 'traces', item: true },
] as const;

/** The tables the template's rows are deleted from: the copied ones and the indexes their views fill. */
const templateTables = ['spans', 'traces', 'session_traces', 'user_traces'];

/**
 * Copies the template workspace's rows `copies` times into `workspaceId` (trace ids
 * `c<copy>-<template id>`), `batch` copies an INSERT, then deletes the template's rows.
 * Returns the seconds the copies took.
 */
export async function copyTemplate(
  client: ClickHouseClient,
  options: { templateWorkspace: string; workspaceId: string; copies: number; batch: number },
): Promise<number> {
  const started = performance.now();
  const { templateWorkspace, workspaceId, copies, batch } = options;
  for (const { table } of copiedTables) {
    await client.command({ query: `DROP TABLE IF EXISTS bench_template_${table}` });
    // Memory: the template is read once a batch; a plain SELECT * leaves the computed (ALIAS) columns out.
    await client.command({
      query: `CREATE TABLE bench_template_${table} ENGINE = Memory AS SELECT * FROM ${table} FINAL WHERE workspace_id = {template:String} AND is_deleted = 0`,
      query_params: { template: templateWorkspace },
    });
  }
  for (const table of templateTables) {
    await client.command({
      query: `ALTER TABLE ${table} DELETE WHERE workspace_id = {template:String} SETTINGS mutations_sync = 2`,
      query_params: { template: templateWorkspace },
    });
  }
  const newId = "concat('c', toString(copy.number), '-', trace_id)";
  for (let first = 0; first < copies; first += batch) {
    const count = Math.min(batch, copies - first);
    for (const { table, item } of copiedTables) {
      const replaced = [
        `{workspace:String} AS workspace_id`,
        `${newId} AS trace_id`,
        ...(item ? [`replaceOne(item, concat('"traceId":"', trace_id, '"'), concat('"traceId":"', ${newId}, '"')) AS item`] : []),
      ];
      await client.command({
        query: `INSERT INTO ${table} SELECT * EXCEPT (number) REPLACE (${replaced.join(', ')})
          FROM bench_template_${table} CROSS JOIN numbers({first:UInt64}, {count:UInt64}) AS copy`,
        query_params: { workspace: workspaceId, first, count },
      });
    }
  }
  for (const { table } of copiedTables) await client.command({ query: `DROP TABLE bench_template_${table}` });
  return (performance.now() - started) / 1000;
}
