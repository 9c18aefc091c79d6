import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { SpanRow } from '../tables/spans-table.js';

/**
 * One acknowledged ingest write: the rows of one request (span rows, or another writer's: a
 * score log holds score rows) and the traces they touch.
 */
export interface LoggedWrite<Row = SpanRow> {
  seq: number;
  workspaceId: string;
  traceIds: string[];
  rows: Row[];
}

/** What reopening a log found: the writes to apply again, and the lines that could not be read. */
export interface Recovered<Row = SpanRow> {
  writes: LoggedWrite<Row>[];
  damagedLines: number;
}

const segmentName = /^(\d{16})\.log$/;
const nameOf = (firstSeq: number) => `${String(firstSeq).padStart(16, '0')}.log`;

interface Segment {
  file: string;
  lastSeq: number;
}

/**
 * The ingest write-ahead log (docs/decisions/105-the-write-path.md). An ingest is
 * answered once its rows are in this log on disk (written and `fdatasync`ed); the writer
 * (write-batcher.ts) applies them to the engine in large flushes afterwards.
 *
 * - Appends share one write and one `fdatasync` with the appends that arrive while the last one
 *   is under way (group commit of the log, as the writer does for the engine).
 * - A line is `<crc32 hex> <JSON>`: a line torn by a crash, which was never acknowledged, fails
 *   its checksum and is skipped when the log is read again.
 * - The log is cut into segments; a segment whose every write was applied is deleted. Writes are
 *   applied again after a crash from the segments left: applying a write twice changes nothing
 *   (spans carry their version, summaries are recomputed from the stored spans).
 */
export class IngestLog<Row = SpanRow> {
  private seq: number;
  private handle: FileHandle | undefined;
  private current: Segment | undefined;
  private currentBytes = 0;
  private readonly closed: Segment[] = [];
  private queued: Buffer[] = [];
  private waiting: Array<{ resolve(): void; reject(error: unknown): void }> = [];
  /** The write and sync under way, if any. */
  private writing: Promise<void> | undefined;
  /** Appends taken and syncs run (appends / syncs is the batching), and the ms of their writes and syncs. */
  readonly counts = { appends: 0, syncs: 0, syncMs: 0 };

  private constructor(
    readonly dir: string,
    segments: Segment[],
    private readonly segmentBytes: number,
  ) {
    this.closed = segments;
    this.seq = segments.reduce((max, s) => Math.max(max, s.lastSeq), 0);
  }

  /**
   * Opens the log in `dir` (made if missing) and reads what an earlier process left: every
   * write still in a segment, in order, to be applied again.
   */
  static open<Row = SpanRow>(dir: string, options: { segmentBytes?: number } = {}): { log: IngestLog<Row>; recovered: Recovered<Row> } {
    mkdirSync(dir, { recursive: true });
    const segments: Segment[] = [];
    const writes: LoggedWrite<Row>[] = [];
    let damagedLines = 0;
    const files = readdirSync(dir)
      .filter((name) => segmentName.test(name))
      .sort();
    for (const name of files) {
      const file = path.join(dir, name);
      let lastSeq = Number(segmentName.exec(name)![1]) - 1;
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (line === '') continue;
        const write = decode<Row>(line);
        if (!write) {
          damagedLines += 1;
          continue;
        }
        writes.push(write);
        lastSeq = Math.max(lastSeq, write.seq);
      }
      segments.push({ file, lastSeq });
    }
    writes.sort((a, b) => a.seq - b.seq);
    return { log: new IngestLog<Row>(dir, segments, options.segmentBytes ?? 8 * 1024 * 1024), recovered: { writes, damagedLines } };
  }

  /** The number of the last append (0 before any); appends are numbered 1, 2, … in the order they are called. */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Numbers the write at once (the order of calls is the order of the log) and returns its
   * number with a promise that settles once the write is on disk.
   */
  append(write: Omit<LoggedWrite<Row>, 'seq'>, rowLines?: Buffer): { seq: number; durable: Promise<void> } {
    const seq = ++this.seq;
    this.counts.appends += 1;
    this.queued.push(encode({ seq, ...write }, rowLines));
    const durable = new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.kick();
    return { seq, durable };
  }

  private kick(): void {
    if (this.writing || this.queued.length === 0) return;
    const buffers = this.queued;
    const waiting = this.waiting;
    this.queued = [];
    this.waiting = [];
    const lastSeq = this.seq;
    this.writing = this.writeOut(buffers, lastSeq)
      .then(
        () => {
          for (const w of waiting) w.resolve();
        },
        (error: unknown) => {
          for (const w of waiting) w.reject(error);
        },
      )
      .finally(() => {
        this.writing = undefined;
        this.kick();
      });
  }

  private async writeOut(buffers: Buffer[], lastSeq: number): Promise<void> {
    const firstSeq = lastSeq - buffers.length + 1;
    if (!this.handle || !this.current) await this.startSegment(firstSeq);
    const started = performance.now();
    try {
      const expected = await writeAll(this.handle!, buffers);
      await this.handle!.datasync();
      this.counts.syncs += 1;
      this.counts.syncMs += performance.now() - started;
      this.currentBytes += expected;
      this.current!.lastSeq = lastSeq;
    } catch (error) {
      // A failed write may leave a torn line: the next writes go to a new segment, so no
      // acknowledged line ever follows a torn one on the same line. A segment that holds no
      // acknowledged line (its first write failed: the disk is full) is deleted, not kept.
      await this.endSegment(this.currentBytes === 0);
      throw error;
    }
  }

  private async startSegment(firstSeq: number): Promise<void> {
    const file = path.join(this.dir, nameOf(firstSeq));
    this.handle = await open(file, 'a');
    this.current = { file, lastSeq: firstSeq - 1 };
    this.currentBytes = 0;
    // The new file's name must survive a crash too.
    syncDirectory(this.dir);
  }

  private async endSegment(discard = false): Promise<void> {
    const handle = this.handle;
    const current = this.current;
    this.handle = undefined;
    this.current = undefined;
    await handle?.close().catch(() => undefined);
    if (current && discard) rmSync(current.file, { force: true });
    else if (current) this.closed.push(current);
  }

  /**
   * Every write numbered up to `seq` is applied: the segments holding only such writes are
   * deleted. The current segment is closed first once it is large enough and wholly applied.
   */
  async applied(seq: number): Promise<void> {
    const ending =
      !this.writing && this.current && this.current.lastSeq <= seq && this.currentBytes >= this.segmentBytes
        ? this.endSegment()
        : undefined;
    // Deleted before this returns its promise: the caller learns of the writes it applied after this.
    while (this.closed.length > 0 && this.closed[0]!.lastSeq <= seq) rmSync(this.closed.shift()!.file, { force: true });
    await ending;
  }

  /** Closes the log; with `drained`, every write was applied and every segment is deleted. */
  async close(drained: boolean): Promise<void> {
    while (this.writing) await this.writing;
    await this.endSegment();
    if (drained) while (this.closed.length > 0) rmSync(this.closed.shift()!.file, { force: true });
  }

  /** The segments on disk now (for the tests and the logs). */
  segments(): string[] {
    return readdirSync(this.dir).filter((name) => segmentName.test(name));
  }
}

/**
 * A line: its CRC-32, then the write as a JSON array. With `rowLines` (its rows' JSON, one a
 * line, as UTF-8: the bytes the writer keeps for its insert, flush.ts `pendingOf`) the array's rows
 * are those bytes, each line break made the comma between two rows (a JSON text holds no raw
 * line break): the same bytes as stringifying the rows again, with no second encoding.
 */
function encode(write: LoggedWrite<unknown>, rowLines?: Buffer): Buffer {
  if (rowLines === undefined) {
    const body = Buffer.from(JSON.stringify([write.seq, write.workspaceId, write.traceIds, write.rows]), 'utf8');
    const line = Buffer.allocUnsafe(body.length + 10);
    body.copy(line, 9);
    return sealed(line);
  }
  const head = `[${write.seq},${JSON.stringify(write.workspaceId)},${JSON.stringify(write.traceIds)},[`;
  const rowsAt = 9 + Buffer.byteLength(head, 'utf8');
  const line = Buffer.allocUnsafe(rowsAt + rowLines.length + 3);
  line.write(head, 9, 'utf8');
  const rows = line.subarray(rowsAt, rowsAt + rowLines.length);
  rowLines.copy(rows);
  for (let at = rows.indexOf(0x0a); at !== -1; at = rows.indexOf(0x0a, at + 1)) rows[at] = 0x2c;
  line.write(']]', rowsAt + rowLines.length, 'latin1');
  return sealed(line);
}

/** Writes a line's frame around its body (from byte 9 to the last): the body's checksum, a space, the closing line break. */
function sealed(line: Buffer): Buffer {
  const checksum = crc32(line.subarray(9, line.length - 1));
  line.write(checksum.toString(16).padStart(8, '0'), 0, 'latin1');
  line[8] = 0x20;
  line[line.length - 1] = 0x0a;
  return line;
}

function decode<Row>(line: string): LoggedWrite<Row> | undefined {
  const json = line.slice(9);
  if (line[8] !== ' ' || crc32(json).toString(16).padStart(8, '0') !== line.slice(0, 8)) return undefined;
  try {
    const [seq, workspaceId, traceIds, rows] = JSON.parse(json) as [number, string, string[], Row[]];
    if (!Number.isSafeInteger(seq) || typeof workspaceId !== 'string' || !Array.isArray(traceIds) || !Array.isArray(rows)) return undefined;
    return { seq, workspaceId, traceIds, rows };
  } catch {
    return undefined;
  }
}

/**
 * Writes every byte of `buffers`, returning how many: a write the disk takes only part of (it
 * fills up) is continued, so the error that stops it is the system's own (ENOSPC).
 */
async function writeAll(handle: FileHandle, buffers: Buffer[]): Promise<number> {
  const expected = buffers.reduce((n, b) => n + b.length, 0);
  let rest = buffers;
  for (let written = 0; written < expected;) {
    const { bytesWritten } = await handle.writev(rest);
    if (bytesWritten === 0) throw new Error(`ingest log: wrote ${written} of ${expected} bytes`);
    written += bytesWritten;
    rest = remainderOf(rest, bytesWritten);
  }
  return expected;
}

/** The bytes of `buffers` after the first `skip`. */
function remainderOf(buffers: Buffer[], skip: number): Buffer[] {
  const rest: Buffer[] = [];
  for (const buffer of buffers) {
    if (skip >= buffer.length) skip -= buffer.length;
    else {
      rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
      skip = 0;
    }
  }
  return rest;
}

/** A directory's entries (a new or renamed file) survive a crash once the directory is synced. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes that the engine refused on their own are kept beside the log, one JSON line each with
 * the engine's error, never dropped (the writer logs each at error level).
 */
export function keepRefused(dir: string, write: LoggedWrite<unknown>, error: string): string {
  const file = path.join(dir, 'refused.jsonl');
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, `${JSON.stringify({ at: new Date().toISOString(), error, ...write })}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return file;
}
