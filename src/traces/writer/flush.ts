import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { LoggedWrite } from './ingest-log.js';
import { heldSummaries, writeSummaries } from '../summaries/recompute.js';
import { insertSpanLines, pendingRowOf, type PendingRow, type SpanRow } from '../tables/spans-table.js';

/**
 * The trace writer's flush (write-batcher.ts runs it, one at a time), read top to bottom:
 *
 * 1. what a write keeps of its rows until its flush: the narrow rows the summaries and the
 *    reads use, and every row's JSON line, encoded once (`pendingOf`; the log's line is made of
 *    the same bytes);
 * 2. the flush's rows at versions in apply order (`flushOf`, `inApplyOrder`);
 * 3. the flush itself (`flushWrites`): one insert of the writes' lines (`flushLines`), then per
 *    workspace the previous summaries and the summaries written (summaries/recompute.ts).
 *
 * The writer itself is generic over what it stores (`WriteTarget`): spans and their summaries
 * here (`spanTarget`), scores in the app's score writer.
 */

/** A write the writer took (write-batcher.ts), waiting for its flush. */
export interface PendingWrite<Pending = PendingRow> {
  /** Its number: in the log's order, or the writer's own without a log. */
  seq: number;
  workspaceId: string;
  rows: Pending[];
  /** Its rows' JSON, one a line, encoded as the write was taken or replayed (`pendingOf`): what the insert sends. */
  lines: Buffer;
  traceIds: string[];
  /**
   * Its rows may be in the store already without their traces' summaries: replayed from the log
   * (a flush may have stored them before the process stopped) or taken by a flush that failed.
   * Its traces' spans are read back, not taken from the flush's rows.
   */
  maybeStored?: boolean;
  /** Without a log the caller waits for the engine: its promise settles with the flush. */
  caller?: { resolve(): void; reject(error: unknown): void };
}

/**
 * One statement of the writer's under way: its writes, and what a read lays over the store
 * while it runs (write-batcher.ts `unapplied`, fresh/pending-summaries.ts). The flush fills it
 * in as it goes; the writer reads it.
 */
export interface Flush<Pending = PendingRow> {
  writes: PendingWrite<Pending>[];
  /** The writes' rows at the versions the flush applies them (final before the insert starts). */
  rows: Pending[];
  /** The newest version of those rows: spans and summaries applied later must exceed it. */
  floor: bigint;
  /** Per workspace, once its previous summaries are read (before any is written), the traces the store held no summary row of (spans only). */
  fresh: Map<string, Set<string>>;
  /** The newest version written, the summaries' included. */
  version: bigint;
  /** The span insert's milliseconds. */
  insertMs: number;
}

/**
 * What a writer stores: what a taken write keeps of its rows until its flush (the rows as the
 * reads of unapplied writes see them, and their JSON lines, the log's line made of the same
 * bytes), and what one flush does with a batch of writes. The trace writer's is spans and
 * their traces' summaries (`spanTarget`, below); the app makes a second writer with the
 * scores' (docs/decisions/109-score-ingest-through-the-write-path.md).
 */
export interface WriteTarget<Row, Pending> {
  pendingOf(rows: readonly Row[]): { rows: Pending[]; lines: Buffer };
  /** The next flush of `writes`: their rows at the versions it applies them, above `applied` (the newest version applied so far). */
  flushOf(writes: PendingWrite<Pending>[], applied: bigint): Flush<Pending>;
  /** Applies the flush to the engine, filling in its record as it goes (the writer reads it meanwhile); marks its writes `maybeStored` when it fails. */
  apply(clickhouse: ClickHouseClient, flush: Flush<Pending>): Promise<void>;
}

/** The trace writer's target: span rows, one insert a flush, then their traces' summaries. */
export const spanTarget: WriteTarget<SpanRow, PendingRow> = { pendingOf, flushOf, apply: flushWrites };

// 1. A write's rows, as bytes.

/**
 * A write's rows as its flush inserts them: each row's JSON (JSONEachRow), one a line, encoded
 * once when the write is taken (the log's line is made of the same bytes). Kept as bytes outside the
 * JS heap while the write waits for its flush, beside its pending rows (tables/spans-table.ts PendingRow): the
 * service's thread collects its young objects every few hundred milliseconds under ingest, and
 * each collection copies what is still alive; waiting writes held as strings and whole rows were
 * most of that copying (docs/benchmarks.md, eleventh pass).
 */
export function linesOf(texts: readonly string[]): Buffer {
  return Buffer.from(texts.join('\n'), 'utf8');
}

/**
 * What a write keeps of its rows until its flush: the pending rows and their lines, each row
 * encoded once (the log's line is made from the same bytes: ingest-log.ts).
 */
export function pendingOf(rows: readonly SpanRow[]) {
  return { rows: rows.map(pendingRowOf), lines: linesOf(rows.map((row) => JSON.stringify(row))) };
}

/** A JSON text holds no raw line break (JSON.stringify escapes it), so a line is a row. */
const rowTexts = (lines: Buffer): string[] => lines.toString('utf8').split('\n');

// 2. The flush's versions.

/** The next flush of `writes`: their rows at versions in apply order, above every version applied so far (`inApplyOrder`). */
export function flushOf(writes: PendingWrite[], applied: bigint): Flush {
  const { rows, floor } = inApplyOrder(
    writes.map((w) => w.rows),
    applied,
  );
  return { writes, rows, floor, fresh: new Map(), version: floor, insertMs: 0 };
}

/**
 * The rows of writes, given in the order they are applied, with versions that follow that
 * order. A request's rows get their version when it is parsed (`toSpanRows`), and requests may
 * be parsed in another order than they are applied (write-batcher.ts: several await room or
 * the log at once). A summary keeps a field of an earlier payload only over spans older than
 * itself (summary.ts, keepEarlier), so a write must carry a newer version than every span and
 * summary applied before it (`floor`): one that does not is raised just above. Summaries take
 * the newest span version applied, not the clock (recompute.ts), so a write parsed while an
 * earlier flush ran is not older than its summaries. A write applied again from the log after
 * a crash starts from a lower floor and never gets a newer version than the first time, so it
 * never overrides what came after it (a later write, a delete, a repricing: those take the
 * clock, far above). Returns the rows and the new floor.
 */
export function inApplyOrder<Row extends { version: string }>(writes: readonly Row[][], floor: bigint): { rows: Row[]; floor: bigint } {
  const rows: Row[] = [];
  for (const write of writes) {
    const raised = new Map<string, string>();
    for (const row of write) {
      let version = raised.get(row.version);
      if (version === undefined) {
        const own = BigInt(row.version);
        version = (own > floor ? own : floor + 1n).toString();
        raised.set(row.version, version);
      }
      rows.push(version === row.version ? row : { ...row, version });
    }
    for (const version of raised.values()) if (BigInt(version) > floor) floor = BigInt(version);
  }
  return { rows, floor };
}

// 3. The flush.

/**
 * What one flush does to the engine, top to bottom:
 *
 * 1. the writes' span rows, at the versions of `flushOf`, in one insert;
 * 2. per workspace, the previous summaries of the traces the writes touch (`heldSummaries`),
 *    which tell the traces the store held nothing of (noted in `flush.fresh`);
 * 3. their summaries computed and written (`writeSummaries`): a trace the store held nothing of
 *    takes its spans from the rows written rather than a read, unless a write of it may have
 *    reached the store before (`maybeStored`).
 *
 * When it fails, its writes are marked `maybeStored`: whatever flush takes them next reads
 * their traces back.
 */
export async function flushWrites(clickhouse: ClickHouseClient, flush: Flush): Promise<void> {
  try {
    const started = performance.now();
    await insertSpanLines(clickhouse, flushLines(flush.writes, flush.rows));
    flush.insertMs = performance.now() - started;
    for (const [workspaceId, { traceIds, readBack }] of touchedTraces(flush.writes)) {
      const held = await heldSummaries(clickhouse, workspaceId, traceIds);
      flush.fresh.set(workspaceId, new Set(held.unheld));
      const fromWritten = new Set(held.unheld.filter((id) => !readBack.has(id)));
      const written = flush.rows.filter((row) => row.workspace_id === workspaceId);
      const newest = await writeSummaries(clickhouse, held, flush.version, written, fromWritten);
      if (newest > flush.version) flush.version = newest;
    }
  } catch (error) {
    for (const w of flush.writes) w.maybeStored = true;
    throw error;
  }
}

/** The traces the writes touch, by workspace, and those a `maybeStored` write touched (their spans are read back). */
function touchedTraces(writes: PendingWrite[]): Map<string, { traceIds: string[]; readBack: Set<string> }> {
  const touched = new Map<string, { ids: Set<string>; readBack: Set<string> }>();
  for (const w of writes) {
    let of = touched.get(w.workspaceId);
    if (!of) touched.set(w.workspaceId, (of = { ids: new Set(), readBack: new Set() }));
    for (const id of w.traceIds) {
      of.ids.add(id);
      if (w.maybeStored) of.readBack.add(id);
    }
  }
  return new Map([...touched].map(([workspaceId, { ids, readBack }]) => [workspaceId, { traceIds: [...ids], readBack }]));
}

/**
 * The JSONEachRow body of a flush, as bytes: its writes' lines in order, `rows` being their rows
 * in apply order. A write whose rows all kept their version gives its lines as they were encoded;
 * a row whose flush raised its version (`inApplyOrder`) gets its line at the new one.
 */
export function flushLines(batch: readonly PendingWrite[], rows: readonly PendingRow[]): Buffer {
  const parts: Buffer[] = [];
  let i = 0;
  for (const w of batch) {
    if (w.rows.length === 0) continue;
    if (parts.length > 0) parts.push(newline);
    const raised = w.rows.some((row, j) => rows[i + j] !== row);
    parts.push(raised ? raisedLines(w, rows.slice(i, i + w.rows.length)) : w.lines);
    i += w.rows.length;
  }
  return Buffer.concat(parts);
}

const newline = Buffer.from('\n');
const versionKey = '"version":"';

/**
 * A write's lines at the versions its flush gives its rows (`rows`, in the write's order). A
 * version is written last in a row's text (`"version":"<digits>"}`), and one of the same number
 * of digits (any version from 2001 to 2286) takes its place in a copy of the bytes; where the
 * text does not end so, or the digits differ in number, the lines are decoded and encoded again.
 */
function raisedLines(w: PendingWrite, rows: readonly PendingRow[]): Buffer {
  const out = Buffer.from(w.lines);
  let start = 0;
  for (let j = 0; j < rows.length; j += 1) {
    const end = j === rows.length - 1 ? out.length : out.indexOf(0x0a, start);
    const from = w.rows[j]!.version;
    const to = rows[j]!.version;
    if (from !== to) {
      const at = end - 2 - from.length;
      const fits = to.length === from.length && out.toString('latin1', at - versionKey.length, end) === `${versionKey}${from}"}`;
      if (!fits) return linesOf(rowTexts(w.lines).map((text, k) => withVersion(text, w.rows[k]!.version, rows[k]!.version)));
      out.write(to, at, 'latin1');
    }
    start = end + 1;
  }
  return out;
}

/**
 * A row's line at another version. A row's text ends with its version (toSpanRow writes it last):
 * that ending is replaced; a text that does not end so (a log line of another layout) is decoded
 * and encoded again.
 */
export function withVersion(text: string, from: string, to: string): string {
  const ending = `${versionKey}${from}"}`;
  if (text.endsWith(ending)) return `${text.slice(0, -ending.length)}${versionKey}${to}"}`;
  return JSON.stringify({ ...(JSON.parse(text) as SpanRow), version: to });
}

/** A waiting write as the log holds it, its rows whole from its lines: for the file of refused writes, which keeps them as sent. */
export function loggedWriteOf(w: PendingWrite<unknown>): LoggedWrite<unknown> {
  return {
    seq: w.seq,
    workspaceId: w.workspaceId,
    traceIds: w.traceIds,
    rows: rowTexts(w.lines).map((text) => JSON.parse(text) as unknown),
  };
}
