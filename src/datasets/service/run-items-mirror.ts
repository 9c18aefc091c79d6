import type { FastifyRequest } from 'fastify';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { Sql } from '../../stores/postgres.js';
import { insertRunItemRows, liveRow, tombstoneRow } from '../tables/run-items-engine-table.js';
import { claimEntries, deleteEntries } from '../tables/run-items-outbox-table.js';
import { selectItemsToMirror } from '../tables/runs-table.js';

/**
 * The engine's copy of the run items, for POST /api/sql (docs/decisions/106-run-items-for-sql.md).
 * PostgreSQL stays the record: a change of run items adds an outbox entry in its own
 * transaction; `flush` then claims the entries (oldest first, `skip locked` so two flushes
 * never send one entry twice at once), writes the rows they name as PostgreSQL has them now
 * (or the tombstones of a deletion) and deletes the entries in the same transaction. When the
 * engine's write fails the transaction rolls back and the entries stay, to be sent by the
 * next flush. Writing twice is harmless: a row carries its PostgreSQL version and the engine
 * keeps the highest.
 */
export interface RunItemsMirror {
  /** Sends what is pending, of one workspace or (at start-up) of all; throws when the engine's write fails. */
  flush(workspaceId?: string): Promise<void>;
}

/** Entries claimed per transaction: a run's entry may name up to 1,000 items (a batch), or all of it. */
const entriesPerRound = 20;

export function runItemsMirror(sql: Sql, clickhouse: ClickHouseClient): RunItemsMirror {
  const round = (workspaceId: string | undefined) =>
    sql.begin(async (transaction) => {
      const tx = transaction as unknown as Sql;
      const entries = await claimEntries(tx, workspaceId, entriesPerRound);
      const rows = [];
      const at = new Date();
      for (const entry of entries) {
        if (entry.deletedVersion !== null) {
          for (const itemId of entry.datasetItemIds ?? [])
            rows.push(tombstoneRow(entry.workspaceId, entry.runId, itemId, entry.deletedVersion, at));
        } else {
          for (const row of await selectItemsToMirror(tx, entry.runId, entry.datasetItemIds)) rows.push(liveRow(entry.workspaceId, row));
        }
      }
      await insertRunItemRows(clickhouse, rows);
      await deleteEntries(
        tx,
        entries.map((e) => e.id),
      );
      return entries.length;
    });
  return {
    async flush(workspaceId) {
      while ((await round(workspaceId)) === entriesPerRound);
    },
  };
}

/**
 * After a request changed run items (PostgreSQL committed): sends the workspace's pending
 * entries. A failure is logged, never answered: the change is recorded, and its entry waits
 * for the next flush.
 */
export async function flushMirror(mirror: RunItemsMirror, request: FastifyRequest): Promise<void> {
  await mirror
    .flush(request.auth.workspaceId)
    .catch((error: unknown) => request.log.warn({ err: error }, 'run items not written to the SQL store yet: the next change sends them'));
}
