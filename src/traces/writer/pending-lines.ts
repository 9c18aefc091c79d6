import type { PendingWrite } from './flush.js';
import type { LoggedWrite } from './ingest-log.js';
import { pendingRowOf, type PendingRow, type SpanRow } from '../tables/span-rows.js';

/**
 * A write's rows as its flush inserts them: each row's JSON (JSONEachRow), one a line, encoded
 * once when the write is taken (the log's line is made of the same bytes). Kept as bytes outside the
 * JS heap while the write waits for its flush, beside its pending rows (tables/span-rows.ts PendingRow): the
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

const versionKey = '"version":"';

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

/**
 * The JSONEachRow body of a flush, as bytes: its writes' lines in order, `rows` being their rows
 * in apply order. A write whose rows all kept their version gives its lines as they were encoded;
 * a row whose flush raised its version (apply-order.ts inApplyOrder) gets its line at the new one.
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

/** A waiting write as the log holds it, its rows whole from its lines: for the file of refused writes, which keeps them as sent. */
export function loggedWriteOf(w: PendingWrite<unknown>): LoggedWrite<unknown> {
  return {
    seq: w.seq,
    workspaceId: w.workspaceId,
    traceIds: w.traceIds,
    rows: rowTexts(w.lines).map((text) => JSON.parse(text) as unknown),
  };
}
