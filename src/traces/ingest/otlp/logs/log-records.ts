import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '../../../../stores/clickhouse.js';
import { nextVersion } from '../../../model/version.js';
import { storeTraces, type TraceIngest } from '../../ingest.js';
import type { Span, StoredSpan, Trace } from '../../../model/schemas.js';
import { fromAnyValue, fromKeyValues } from '../wire/any-value.js';
import { isGenAiContentEvent, messagesFromEvents } from '../conventions/genai-events.js';
import { toSpanIO } from '../values/io-genai.js';
import { isEvaluationRecord } from './evaluation-events.js';
import type { PlainLogsRequest } from '../wire/model.js';
import { parseUnixNanos, toHexId, type SpanRejection } from '../mapping/normalize.js';
import { insertLogRecords, selectLogRecords, type LogRecordRow, type SpanKey } from '../../../tables/log-records-table.js';
import { selectLatestSpans } from '../../../tables/spans-table.js';

/**
 * GenAI content on the OTLP logs signal, attached to its span whichever arrives first
 * (docs/decisions/050-otlp-fidelity.md). Records are stored in `genai_log_records`
 * (clickhouse/0005). Then:
 * - records whose span is already stored rewrite that span, a newer version of the same row
 *   with the messages filled, so the upsert stays exact and the summary is recomputed;
 * - a span stored later finds its records there (`attachStoredContent`, called by the traces
 *   route after it stored the spans), and is rewritten the same way.
 * Each side stores first and looks for the other second, so whichever order two concurrent
 * requests take, at least one of them sees the other. A span's messages are always rebuilt
 * from all its records, so doing it twice gives the same span.
 */

export interface NormalizedLogs {
  rows: Omit<LogRecordRow, 'workspace_id' | 'version'>[];
  rejections: SpanRejection[];
  recordCount: number;
}

const storedNanos = (seconds: number, nanos: number) =>
  `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')}.${String(nanos).padStart(9, '0')}`;

/**
 * The GenAI records of a logs request. A record is kept when it names a span (trace and span
 * id) and a GenAI content event (`eventName`, or the `event.name` attribute older SDKs use);
 * an evaluation event (`gen_ai.evaluation.result`) is left to the caller that takes it as a score
 * (`evaluationsTaken`); any other record is counted as rejected with its reason, since Loupe
 * keeps no general logs.
 */
export function normalizeLogs(request: PlainLogsRequest, options: { evaluationsTaken?: boolean } = {}): NormalizedLogs {
  const rows: NormalizedLogs['rows'] = [];
  const rejections: SpanRejection[] = [];
  let recordCount = 0;
  for (const resourceLogs of request.resourceLogs ?? []) {
    for (const scopeLogs of resourceLogs.scopeLogs ?? []) {
      for (const record of scopeLogs.logRecords ?? []) {
        recordCount++;
        const traceId = toHexId(record.traceId, 16);
        const spanId = toHexId(record.spanId, 8);
        const attributes = fromKeyValues(record.attributes);
        const name = record.eventName || (typeof attributes['event.name'] === 'string' ? attributes['event.name'] : '');
        if (!traceId || !spanId) {
          rejections.push({
            traceId: traceId || '',
            spanId: spanId || '',
            reason: 'log record names no span (trace and span id): not stored',
          });
          continue;
        }
        // Evaluation events become scores (evaluation-events.ts), taken by the caller.
        if (options.evaluationsTaken && isEvaluationRecord(record.eventName, record.attributes)) continue;
        if (!isGenAiContentEvent(name)) {
          rejections.push({ traceId, spanId, reason: `log record "${name}" is not a GenAI content event: not stored` });
          continue;
        }
        const time = parseUnixNanos(record.timeUnixNano) ?? parseUnixNanos(record.observedTimeUnixNano) ?? { seconds: 0, nanos: 0 };
        const body = JSON.stringify(record.body !== undefined ? fromAnyValue(record.body) : attributes);
        const timeText = storedNanos(time.seconds, time.nanos);
        const id = createHash('sha1').update(`${timeText}\u0000${name}\u0000${body}`).digest().readBigUInt64BE(0).toString();
        rows.push({ trace_id: traceId, span_id: spanId, time: timeText, seq: rows.length, event_name: name, body, record_id: id });
      }
    }
  }
  return { rows, rejections, recordCount };
}

/**
 * Records of the given spans, deduplicated (the newest row of each record, skipped when it is
 * a tombstone of a deleted trace), in time order (then request order).
 */
async function readRecords(clickhouse: ClickHouseClient, workspaceId: string, keys: SpanKey[]) {
  const bySpan = new Map<string, { name: string; body: unknown }[]>();
  for (const row of await selectLogRecords(clickhouse, workspaceId, keys)) {
    const key = `${row.trace_id}/${row.span_id}`;
    let list = bySpan.get(key);
    if (!list) bySpan.set(key, (list = []));
    list.push({ name: row.event_name, body: JSON.parse(row.body) as unknown });
  }
  return bySpan;
}

/** A generation span that takes its conversation from log records: none of its own, or one records gave it. */
export function takesLogContent(span: Pick<Span, 'kind' | 'input' | 'output' | 'metadata'>): boolean {
  if (!span.kind.startsWith('llm.')) return false;
  const otel = (span.metadata as { otel?: { contentFrom?: string } } | undefined)?.otel;
  if (otel?.contentFrom === 'logs') return true;
  return !span.input?.messages?.length && !span.output?.messages?.length;
}

/** The span with its messages rebuilt from all its records (the same span for the same records). */
export function withLogContent<S extends Span>(span: S, records: { name: string; body: unknown }[]): S {
  const { input, output } = messagesFromEvents(records);
  const next = { ...span };
  const side = (io: Span['input'], converted: typeof input) => {
    const mapped = toSpanIO(converted, 'logs');
    const { messages: _m, ...rest } = io ?? {};
    const merged = { ...rest, ...mapped };
    return Object.keys(merged).length > 0 ? merged : undefined;
  };
  const inputIO = side(span.input, input);
  const outputIO = side(span.output, output);
  if (inputIO) next.input = inputIO;
  if (outputIO) next.output = outputIO;
  const metadata = span.metadata ?? {};
  const otel = (metadata.otel ?? {}) as Record<string, unknown>;
  next.metadata = { ...metadata, otel: { ...otel, contentFrom: 'logs', logRecords: records.length } };
  return next;
}

/**
 * After spans were stored: the generation spans among them that have records waiting get their
 * messages and are stored again (a newer version). One read, and a write only when records exist.
 */
export async function attachStoredContent(ingest: TraceIngest, workspaceId: string, traces: Trace[]): Promise<void> {
  const clickhouse = ingest.writer.clickhouse;
  const keys: SpanKey[] = [];
  for (const trace of traces)
    for (const span of trace.spans) if (takesLogContent(span)) keys.push({ traceId: trace.traceId, spanId: span.spanId });
  if (keys.length === 0) return;
  const records = await readRecords(clickhouse, workspaceId, keys);
  if (records.size === 0) return;
  const rewritten: Trace[] = [];
  for (const trace of traces) {
    const spans = trace.spans.flatMap((span) => {
      const found = records.get(`${trace.traceId}/${span.spanId}`);
      return found && takesLogContent(span) ? [withLogContent(span, found)] : [];
    });
    if (spans.length > 0) rewritten.push({ ...trace, spans });
  }
  // The native store path again: priced and written like the first copy, a newer version.
  await storeTraces(ingest, workspaceId, rewritten);
}

/**
 * The span as its client sent it, from its stored detail: a cost the store computed (and its
 * source and pricing, output-only fields) is left out, so storing it again prices it again
 * rather than taking the computed figure for one the client sent.
 */
function sentFields(stored: StoredSpan): Span {
  const { costSource, pricing: _pricing, ...span } = stored;
  if (costSource !== undefined && costSource !== 'provided') delete span.costUsd;
  return span;
}

/**
 * Stores a logs request's records, then rewrites the stored spans they belong to. Returns how
 * many spans were rewritten.
 */
export async function storeLogRecords(ingest: TraceIngest, workspaceId: string, logs: NormalizedLogs): Promise<number> {
  const clickhouse = ingest.writer.clickhouse;
  if (logs.rows.length === 0) return 0;
  const version = nextVersion().toString();
  await insertLogRecords(
    clickhouse,
    logs.rows.map((row) => ({ ...row, workspace_id: workspaceId, version })),
  );
  const keys = new Map<string, SpanKey>();
  for (const row of logs.rows) keys.set(`${row.trace_id}/${row.span_id}`, { traceId: row.trace_id, spanId: row.span_id });
  const traceIds = [...new Set([...keys.values()].map((k) => k.traceId))];
  // The spans may have been answered and not yet applied (write-batcher.ts): read them once they are.
  await ingest.writer.readable(workspaceId, traceIds);
  const stored = await selectLatestSpans(clickhouse, workspaceId, [...keys.values()]);
  const candidates = stored.map((row) => ({ row, span: JSON.parse(row.detail) as StoredSpan })).filter(({ span }) => takesLogContent(span));
  if (candidates.length === 0) return 0;
  const records = await readRecords(
    clickhouse,
    workspaceId,
    candidates.map(({ row }) => ({ traceId: row.trace_id, spanId: row.span_id })),
  );
  const rewritten = new Map<string, Trace>();
  for (const { row, span } of candidates) {
    const found = records.get(`${row.trace_id}/${row.span_id}`);
    if (!found) continue;
    let trace = rewritten.get(row.trace_id);
    if (!trace) {
      trace = {
        traceId: row.trace_id,
        source: row.source,
        spans: [],
        ...(row.trace_name ? { name: row.trace_name } : {}),
        ...(row.session_id ? { sessionId: row.session_id } : {}),
        ...(row.environment ? { environment: row.environment } : {}),
        ...(row.service ? { service: row.service } : {}),
        ...(row.user_id ? { userId: row.user_id } : {}),
        ...(row.tags.length > 0 ? { tags: row.tags } : {}),
      };
      rewritten.set(row.trace_id, trace);
    }
    trace.spans.push(withLogContent(sentFields(span), found));
  }
  const traces = [...rewritten.values()];
  // The native store path again: priced and written like the first copy, a newer version.
  await storeTraces(ingest, workspaceId, traces);
  return traces.reduce((n, t) => n + t.spans.length, 0);
}
