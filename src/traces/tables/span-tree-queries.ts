import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { costSourceSchema } from '../model/wire/cost-schemas.js';
import { spanKindSchema, spanStatusSchema } from '../model/schemas.js';
import { workspaceId } from './params.js';

/**
 * The SQL of a trace read in two steps (span-tree-schemas.ts): the tree from the narrow span
 * columns, never `detail` (the one column holding payloads, up to megabytes per trace), and one
 * span's `detail`. Both are key reads led by the workspace (`FINAL` bounded by the primary key,
 * tombstones hidden), one thread each like the other key reads of queries.ts.
 */

const traceKey = z.object({ workspaceId, traceId: z.string().min(1) });

/**
 * A span's tree fields in column order. Optional fields not sent are '' (strings) or null
 * (numbers), as ingest/rows.ts toSpanRow stores them; times are ISO 8601 as `detail` has them.
 */
const optionalNumber = z.number().nullable();
export const spanNodeTupleSchema = z.tuple([
  z.string(), // span_id
  z.string(), // parent_span_id
  z.string(), // name
  spanKindSchema, // kind
  spanStatusSchema, // status
  z.string(), // start_time
  z.string(), // end_time
  z.number(), // duration_ms
  z.string(), // model
  z.string(), // provider
  optionalNumber, // input_tokens
  optionalNumber, // output_tokens
  optionalNumber, // total_tokens
  optionalNumber, // cache_read_tokens
  optionalNumber, // cache_write_tokens
  optionalNumber, // reasoning_tokens
  optionalNumber, // cost_usd
  costSourceSchema.or(z.literal('')), // cost_source
  optionalNumber, // ttft_ms
  z.string(), // prompt_name
  z.string(), // prompt_version
]);
export type SpanNodeTuple = z.infer<typeof spanNodeTupleSchema>;

/**
 * A stored time as model/stored-time.ts fromStoredTime writes it in `detail`: milliseconds unless the
 * microseconds are set (formatted in the engine: 20,000 times of a large trace cost a few
 * milliseconds there, several times that in JavaScript).
 */
const isoTime = (column: string) =>
  `concat(if(toUnixTimestamp64Micro(${column}) % 1000 = 0,
    substring(formatDateTime(${column}, '%Y-%m-%dT%H:%i:%S.%f', 'UTC'), 1, 23),
    formatDateTime(${column}, '%Y-%m-%dT%H:%i:%S.%f', 'UTC')), 'Z')`;

const traceTreeRowSchema = z.object({ item: z.string(), spans: z.array(spanNodeTupleSchema) });
export type TraceTreeRow = z.infer<typeof traceTreeRowSchema>;

/**
 * A trace's list item and the tree fields of its live spans in start order, in one statement
 * (the spans ride along as an array from a scalar subquery, as findTraceWithSpans does):
 * undefined when the trace has no live summary.
 */
export async function selectTraceTree(clickhouse: ClickHouseClient, params: z.input<typeof traceKey>): Promise<TraceTreeRow | undefined> {
  const query_params = traceKey.parse(params);
  const live = 'workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0';
  const result = await clickhouse.query({
    query: `
      SELECT item,
        (SELECT groupArray(tuple(span_id, parent_span_id, name, kind, status, ${isoTime('start_time')}, ${isoTime('end_time')},
            duration_ms, model, provider, input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens,
            reasoning_tokens, cost_usd, cost_source, ttft_ms, prompt_name, prompt_version))
         FROM (
           SELECT span_id, parent_span_id, name, kind, status, start_time, end_time, duration_ms, model, provider,
             input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
             cost_usd, cost_source, ttft_ms, prompt_name, prompt_version
           FROM spans FINAL
           WHERE ${live}
           ORDER BY start_time, span_id
         )) AS spans
      FROM traces FINAL
      WHERE ${live}
      SETTINGS max_threads = 1`,
    query_params,
    format: 'JSONEachRow',
  });
  return oneRow(traceTreeRowSchema, result);
}

const spanKey = traceKey.extend({ spanId: z.string().min(1) });
const spanDetailRowSchema = z.object({ detail: z.string().min(2) });

/** One live span's `detail` (the StoredSpan as JSON text, ingest/rows.ts storedSpanOf), undefined when there is none. */
export async function selectSpanDetail(clickhouse: ClickHouseClient, params: z.input<typeof spanKey>): Promise<string | undefined> {
  const query_params = spanKey.parse(params);
  const result = await clickhouse.query({
    query: `
      SELECT detail
      FROM spans FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND span_id = {spanId:String} AND is_deleted = 0
      SETTINGS max_threads = 1`,
    query_params,
    format: 'JSONEachRow',
  });
  return (await oneRow(spanDetailRowSchema, result))?.detail;
}

/** The one row a read by key finds (the key makes more an error), or undefined. */
async function oneRow<S extends z.ZodTypeAny>(schema: S, result: { json(): Promise<unknown> }): Promise<z.infer<S> | undefined> {
  return z
    .array(schema)
    .max(1)
    .parse(await result.json())[0];
}
