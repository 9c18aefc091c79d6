import { describe, expect, it } from 'vitest';
import { type PendingWrite, flushLines, loggedWriteOf, pendingOf, withVersion, inApplyOrder } from '../../src/traces/writer/flush.js';
import { toSpanRows } from '../../src/traces/ingest/ingest.js';
import { pendingRowOf, type SpanRow, type SpanFacts } from '../../src/traces/tables/spans-table.js';
import type { Trace } from '../../src/traces/model/schemas.js';

const trace = (traceId: string, spans = 3): Trace => ({
  traceId,
  source: 'sdk',
  name: 'agent run',
  tags: ['a', 'b'],
  spans: Array.from({ length: spans }, (_, i) => ({
    spanId: `${traceId}-${i}`,
    name: `step ${i}`,
    kind: 'llm.chat' as const,
    status: 'error' as const,
    statusMessage: 'line one\nline two',
    startTime: '2025-01-01T10:00:00.123456Z',
    endTime: '2025-01-01T10:00:01Z',
    durationMs: 876.544,
    model: 'gpt-4o',
    inputTokens: 10 + i,
    input: { messages: [{ role: 'user', content: 'say "hi"\n\u2028 é 日本' }] },
    attributes: { 'gen_ai.system': 'openai', n: 3 },
    metadata: { nested: { x: [1, 2] } },
  })),
});

const write = (seq: number, rows: SpanRow[]): PendingWrite => ({
  seq,
  workspaceId: 'ws',
  traceIds: [...new Set(rows.map((r) => r.trace_id))],
  ...pendingOf(rows),
});

/** The batch's rows at the versions a flush from the first floor gives them. */
const inOrder = (batch: PendingWrite[]) =>
  inApplyOrder(
    batch.map((w) => w.rows),
    0n,
  );

describe('the lines a waiting write keeps', () => {
  it('keeps each row whole in its line, and of the row only the columns its summaries and reads use', () => {
    const rows = toSpanRows('ws', [trace('t1'), trace('t2', 2)]);
    const w = write(1, rows);
    expect(loggedWriteOf(w)).toEqual({ seq: 1, workspaceId: 'ws', traceIds: ['t1', 't2'], rows });
    expect(w.lines.toString('utf8').split('\n')).toEqual(rows.map((row) => JSON.stringify(row)));
    const facts: Array<keyof SpanFacts | 'workspace_id'> = [
      'workspace_id',
      'trace_id',
      'span_id',
      'version',
      'trace_name',
      'session_id',
      'environment',
      'service',
      'user_id',
      'tags',
      'source',
      'parent_span_id',
      'status',
      'kind',
      'start_time',
      'end_time',
      'duration_ms',
      'model',
      'provider',
      'input_tokens',
      'output_tokens',
      'total_tokens',
      'cost_usd',
      'cost_source',
      'ttft_ms',
    ];
    expect(Object.keys(w.rows[0]!).sort()).toEqual([...facts].sort());
    w.rows.forEach((row, i) => expect(row).toEqual(Object.fromEntries(facts.map((key) => [key, rows[i]![key]]))));
  });

  it("gives a flush its writes' lines as encoded when no version is raised", () => {
    const first = toSpanRows('ws', [trace('t1')]);
    const second = toSpanRows('ws', [trace('t2')]);
    const batch = [write(1, first), write(2, second)];
    const raised = inOrder(batch);
    expect(raised.rows.every((row, i) => row === [...batch[0]!.rows, ...batch[1]!.rows][i])).toBe(true);
    expect(flushLines(batch, raised.rows).toString('utf8')).toBe([...first, ...second].map((row) => JSON.stringify(row)).join('\n'));
  });

  it('writes a raised row at its new version, the rest of its line unchanged', () => {
    const earlier = toSpanRows('ws', [trace('t1')]);
    const later = toSpanRows('ws', [trace('t2')]);
    // Parsed after the other, applied first: the second write is raised above the first.
    const batch = [write(1, later), write(2, earlier)];
    const raised = inOrder(batch);
    const newVersion = raised.rows.at(-1)!.version;
    expect(BigInt(newVersion)).toBeGreaterThan(BigInt(earlier[0]!.version));
    const expected = [...later, ...earlier.map((row) => ({ ...row, version: newVersion }))].map((row) => JSON.stringify(row));
    expect(flushLines(batch, raised.rows).toString('utf8')).toBe(expected.join('\n'));
    expect(
      flushLines(batch, raised.rows)
        .toString('utf8')
        .split('\n')
        .map((line) => JSON.parse(line) as SpanRow),
    ).toEqual([...later, ...earlier.map((row) => ({ ...row, version: newVersion }))]);
  });

  it("replaces a version at the end of a row's text, and decodes a text of another layout", () => {
    const [row] = toSpanRows('ws', [trace('t1', 1)]);
    const text = JSON.stringify(row);
    expect(text.endsWith(`"version":"${row!.version}"}`)).toBe(true);
    expect(withVersion(text, row!.version, '42')).toBe(JSON.stringify({ ...row, version: '42' }));
    const reordered = JSON.stringify({ version: row!.version, ...row });
    const moved = withVersion(
      `{"version":"${row!.version}",${JSON.stringify({ ...row, version: undefined }).slice(1)}`,
      row!.version,
      '42',
    );
    expect(JSON.parse(moved)).toEqual({ ...row, version: '42' });
    expect(JSON.parse(withVersion(reordered, 'not it', '43'))).toEqual({ ...row, version: '43' });
  });

  it('leaves a write without rows out of the body', () => {
    const rows = toSpanRows('ws', [trace('t1', 1)]);
    const batch = [write(1, []), write(2, rows), write(3, [])];
    const body = flushLines(
      batch,
      batch.flatMap((w) => w.rows),
    );
    expect(body.toString('utf8')).toBe(JSON.stringify(rows[0]));
  });

  it('raises a version in the bytes, and decodes a write whose line has another layout or whose version another length', () => {
    const rows = toSpanRows('ws', [trace('t1', 2)]);
    const texts = rows.map((row) => JSON.stringify(row));
    const raisedTo = (version: string) => rows.map((row) => ({ ...row, version }));
    const body = (w: PendingWrite, to: SpanRow[]) => flushLines([w], to.map(pendingRowOf)).toString('utf8');
    // As encoded: the version last, patched in place.
    const asEncoded = write(1, rows);
    const to = (BigInt(rows[0]!.version) + 7n).toString();
    expect(body(asEncoded, raisedTo(to))).toBe(
      raisedTo(to)
        .map((row) => JSON.stringify(row))
        .join('\n'),
    );
    expect(asEncoded.lines.toString('utf8')).toBe(texts.join('\n'));
    // A version of another number of digits.
    expect(body(asEncoded, raisedTo('7'))).toBe(
      raisedTo('7')
        .map((row) => JSON.stringify(row))
        .join('\n'),
    );
    // Lines of another layout (the version first), as an older log might hold them.
    const moved = { ...asEncoded, lines: Buffer.from(rows.map(({ version, ...rest }) => JSON.stringify({ version, ...rest })).join('\n')) };
    const decoded = body(moved, raisedTo(to))
      .split('\n')
      .map((line) => JSON.parse(line) as SpanRow);
    expect(decoded).toEqual(raisedTo(to));
  });
});
