import { z } from 'zod';
import { insertJsonLines, type ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';
import type { PromptFiguresReader } from '../../contract/prompt-figures.js';
import { toStoredTime } from '../model/stored-time.js';
import { finiteOrNull } from '../model/finite.js';
import { textSearchSchema, type SearchField, type TextSearch } from '../model/search.js';
import { costSourceSchema } from '../model/wire/cost-schemas.js';
import { spanKindSchema, spanStatusSchema } from '../model/schemas.js';
import { spanKeyParams, workspaceId } from './params.js';

/**
 * The SQL on `spans` (clickhouse/0001 and later): one named query per read, its parameters and
 * rows as zod schemas. Every statement is led by `workspace_id = {workspaceId:String}`, the
 * first column of the sorting key, so no read or write crosses a workspace.
 *
 * Inserts wait for the write (no async insert) and, on a cluster, for the Distributed table to
 * hand the rows to their shard (`insert_distributed_sync`, stores/clickhouse.ts): the summary
 * recomputed right after must see them.
 */

// The rows.

/**
 * The rows of `spans` (clickhouse/0001, 0003, 0004) as ingest makes them (ingest/ingest.ts), and
 * the narrower row a write keeps until its flush. Optional fields that were not sent are stored
 * as '' (strings) or NULL (numbers); `detail` holds the span as the API returns it.
 */

/** An engine UInt64 as decimal text (toString), so no digit is lost in JSON. */
export const versionText = z.string().regex(/^\d+$/);
const nullableNumber = z.number().nullable();

/**
 * The columns of one live span that the summaries (summaries/summary.ts) and the reads over
 * unapplied writes use, as the key read returns them (tables/spans-table.ts).
 */
export const spanFactsSchema = z.object({
  trace_id: z.string(),
  span_id: z.string(),
  version: versionText,
  trace_name: z.string(),
  session_id: z.string(),
  environment: z.string(),
  service: z.string(),
  user_id: z.string(),
  tags: z.array(z.string()),
  source: z.string(),
  parent_span_id: z.string(),
  status: z.string(),
  kind: z.string(),
  /** 'YYYY-MM-DD hh:mm:ss.ffffff' (UTC): fixed width, so text order is time order. */
  start_time: z.string(),
  end_time: z.string(),
  duration_ms: z.number(),
  model: z.string(),
  provider: z.string(),
  input_tokens: nullableNumber,
  output_tokens: nullableNumber,
  total_tokens: nullableNumber,
  cost_usd: nullableNumber,
  /** 'provided' | 'computed' | 'none', '' for a span without a cost that was not priced (cost/pricing.ts). */
  cost_source: z.string(),
  ttft_ms: nullableNumber,
});
export type SpanFacts = z.infer<typeof spanFactsSchema>;

/** A whole row of `spans`: the facts, and what only the insert and the reads of one span take. */
export const spanRowSchema = spanFactsSchema.extend({
  workspace_id: z.string(),
  name: z.string(),
  status_message: z.string(),
  cache_read_tokens: nullableNumber,
  cache_write_tokens: nullableNumber,
  reasoning_tokens: nullableNumber,
  prompt_name: z.string(),
  prompt_version: z.string(),
  /** The StoredSpan as JSON text (ingest/ingest.ts, storedSpanOf). */
  detail: z.string(),
  /** attributes and metadata as string maps (stringMapOf), for queries by key (clickhouse/0008). */
  attributes_map: z.record(z.string(), z.string()),
  metadata_map: z.record(z.string(), z.string()),
});
export type SpanRow = z.infer<typeof spanRowSchema>;

/**
 * A span row as a write keeps it until its flush (writer/write-batcher.ts): the columns the summaries
 * and the reads over unapplied writes use (SpanFacts) and its workspace. The rest (`detail`, the
 * attribute maps, the status message: most of a row's bytes) only the insert reads, and the
 * write's encoded lines hold it (writer/flush.ts); the row whole would be kept twice.
 */
export type PendingRow = SpanFacts & { workspace_id: string };

/** The pending row of a span row, field by field (no rest spread: one of these per span ingested). */
export function pendingRowOf(row: SpanRow): PendingRow {
  return {
    workspace_id: row.workspace_id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    version: row.version,
    trace_name: row.trace_name,
    session_id: row.session_id,
    environment: row.environment,
    service: row.service,
    user_id: row.user_id,
    tags: row.tags,
    source: row.source,
    parent_span_id: row.parent_span_id,
    status: row.status,
    kind: row.kind,
    start_time: row.start_time,
    end_time: row.end_time,
    duration_ms: row.duration_ms,
    model: row.model,
    provider: row.provider,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    total_tokens: row.total_tokens,
    cost_usd: row.cost_usd,
    cost_source: row.cost_source,
    ttft_ms: row.ttft_ms,
  };
}

// The statements.

/**
 * Reads of a few traces by primary key: more threads only add start-up cost. In the statement,
 * not in clickhouse_settings: the embedded session would keep it for every later query.
 */
export const keyReadSettings = 'SETTINGS max_threads = 1';

const traceIds = z.array(z.string()).min(1);

export async function insertSpanRows(clickhouse: ClickHouseClient, rows: SpanRow[]): Promise<void> {
  if (rows.length === 0) return;
  await clickhouse.insert({ table: 'spans', values: rows, format: 'JSONEachRow' });
}

/**
 * The same insert from rows already encoded, one JSON object a line, as UTF-8 bytes (the writer
 * encodes each request's rows as it takes them: writer/flush.ts), handed to
 * the engine as they are (clickhouse.ts insertJsonLines).
 */
export async function insertSpanLines(clickhouse: ClickHouseClient, lines: Buffer): Promise<void> {
  await insertJsonLines(clickhouse, 'spans', lines);
}

const spanFacts = spanFactsSchema.extend({ is_deleted: z.number() });

/**
 * What a summary recompute reads of the spans (summary.ts): the latest version of each span of
 * the traces, narrow columns only, deleted ones included (the caller drops them: filtering after
 * LIMIT 1 BY would take a subquery, which the engine analyses more slowly than the caller
 * filters). Deduplicated with LIMIT 1 BY (about 1.7x faster than FINAL for a hundred traces
 * spread over many parts; every version of a span sits on one shard, so this is exact on a
 * cluster too). A plain read, apart from the previous summaries' (traces-table.ts): the two
 * cost the engine less than one statement holding both (8 + 3 ms against 14 ms for 16 traces).
 */
export const selectSummarySpans = defineQuery({
  name: 'selectSummarySpans',
  params: z.object({ workspaceId, traceIds }),
  row: spanFacts,
  sql: (values) => ({
    values,
    query: `
      SELECT trace_id, span_id, toString(version) AS version, trace_name, session_id, environment, service, user_id, tags,
        source, parent_span_id, status, kind, toString(start_time) AS start_time, toString(end_time) AS end_time, duration_ms,
        model, provider, input_tokens, output_tokens, total_tokens, cost_usd, cost_source, ttft_ms, is_deleted
      FROM spans
      WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)}
      ORDER BY version DESC
      LIMIT 1 BY trace_id, span_id
      ${keyReadSettings}`,
  }),
});

/** The details (the wire shape, clickhouse/0003) of every live span of the given traces, in start order. */
export const selectSpanDetails = defineQuery({
  name: 'selectSpanDetails',
  params: z.object({ workspaceId, traceIds }),
  row: z.object({ trace_id: z.string(), detail: z.string() }),
  sql: (values) => ({
    values,
    query: `
      SELECT trace_id, detail FROM spans FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)} AND is_deleted = 0
      ORDER BY trace_id, start_time, span_id
      ${keyReadSettings}`,
  }),
});

/**
 * Tombstones (is_deleted = 1, a newer version) for the trace's spans. They carry the keys and
 * start time only, so once merged the spans' content is gone from disk too; the start time
 * keeps the retention TTL of the tombstone in step with the rows it hides.
 */
export async function tombstoneSpans(clickhouse: ClickHouseClient, params: { workspaceId: string; traceId: string; version: string }) {
  await clickhouse.command({
    query: `
      INSERT INTO spans (workspace_id, trace_id, span_id, start_time, version, is_deleted)
      SELECT workspace_id, trace_id, span_id, start_time, {version:UInt64}, 1 FROM spans FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id = {traceId:String} AND is_deleted = 0`,
    query_params: params,
  });
}

/** The widest window DateTime64(6) holds: the bounds of a window that names none (ingest takes years 1970 to 2099). */
const earliest = '1900-01-01 00:00:00.000000';
const latest = '2299-12-31 23:59:59.999999';
const storedTime = z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);

/**
 * Per version of one prompt name, the figures of the workspace's live spans that name it,
 * starting strictly inside the window. Spans are deduplicated with LIMIT 1 BY over a narrow
 * column set (FINAL would block the prompt_name bloom filter on a wide scan). Tombstones carry
 * no prompt name, so they are read beside the named rows: a span whose newest row is a
 * tombstone (a deleted trace) drops out. Percentiles are exact (`quantilesExactInclusive`), as
 * in the trace stats; NaN (no value) comes back as null.
 */
export const selectPromptVersionFigures = defineQuery({
  name: 'selectPromptVersionFigures',
  params: z.object({
    workspaceId,
    promptName: z.string(),
    startAfter: storedTime.default(earliest),
    startBefore: storedTime.default(latest),
  }),
  row: z.object({
    version: z.string(),
    calls: z.number(),
    errorCount: z.number(),
    errorRate: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    totalTokens: z.number(),
    costUsd: z.number(),
    costPerCall: nullableNumber,
    latency: z.array(nullableNumber),
    ttftP50: nullableNumber,
    ttftCount: z.number(),
  }),
  sql: (values) => ({
    values,
    query: `
      SELECT
        prompt_version AS version,
        count() AS calls,
        countIf(status = 'error') AS errorCount,
        errorCount / calls AS errorRate,
        sum(ifNull(input_tokens, 0)) AS inputTokens,
        sum(ifNull(output_tokens, 0)) AS outputTokens,
        sum(ifNull(total_tokens, 0)) AS totalTokens,
        sum(ifNull(cost_usd, 0)) AS costUsd,
        costUsd / calls AS costPerCall,
        quantilesExactInclusive(0.5, 0.95)(duration_ms) AS latency,
        quantileExactInclusiveIf(0.5)(assumeNotNull(ttft_ms), isNotNull(ttft_ms)) AS ttftP50,
        countIf(isNotNull(ttft_ms)) AS ttftCount
      FROM (
        SELECT prompt_version, status, duration_ms, input_tokens, output_tokens, total_tokens, cost_usd, ttft_ms, is_deleted
        FROM spans
        WHERE workspace_id = {workspaceId:String}
          AND (prompt_name = {promptName:String} OR is_deleted = 1)
          AND start_time > {startAfter:DateTime64(6, 'UTC')} AND start_time < {startBefore:DateTime64(6, 'UTC')}
        ORDER BY version DESC
        LIMIT 1 BY trace_id, span_id
      )
      WHERE is_deleted = 0
      GROUP BY prompt_version`,
  }),
});

/** The trace store's side of contract/prompt-figures.ts, for the prompt routes. */
export function promptFiguresReader(clickhouse: ClickHouseClient): PromptFiguresReader {
  return async (workspaceId, promptName, window) => {
    const rows = await selectPromptVersionFigures(clickhouse, {
      workspaceId,
      promptName,
      startAfter: window.startAfter === undefined ? undefined : toStoredTime(window.startAfter),
      startBefore: window.startBefore === undefined ? undefined : toStoredTime(window.startBefore),
    });
    return rows.map(({ latency, ttftCount, ...row }) => ({
      ...row,
      costPerCall: finiteOrNull(row.costPerCall),
      latencyP50: finiteOrNull(latency[0]),
      latencyP95: finiteOrNull(latency[1]),
      ttftP50: ttftCount === 0 ? null : finiteOrNull(row.ttftP50),
    }));
  };
}

/**
 * The words of a span the text index holds (clickhouse/0015): written exactly as the index's
 * expression, or the engine would not use the index.
 */
export const indexedText = `lowerUTF8(replaceRegexpAll(detail, '\\\\\\\\[nrtbf"\\\\\\\\/]', ' '))`;

/** The span holds every word of the terms as a word, by the text index (`searchText`: the terms joined by spaces). */
const indexedWords = `hasAllTokens(${indexedText}, tokens(lowerUTF8({searchText:String}), 'splitByNonAlpha'))`;

/** A span's searched texts (search.ts `searchFields`), as the exact check reads them. */
const searchedTexts: Record<SearchField, string> = {
  names: 'name',
  input: 'input',
  output: 'output',
  statusMessage: 'status_message',
  attributes: "arrayStringConcat(mapValues(attributes_map), '\\n')",
};
const searchedText = (fields: readonly SearchField[]) => `concat(${fields.map((field) => searchedTexts[field]).join(", '\\n', ")})`;

/** Every term inside the span's searched texts, case-insensitively (Unicode case): the exact check. */
const exactMatch = (fields: readonly SearchField[]) =>
  `arrayAll(term -> positionCaseInsensitiveUTF8(${searchedText(fields)}, term) > 0, {searchTerms:Array(String)})`;

/**
 * The condition on `trace_id` of the traces with a live span whose searched texts hold every
 * term (GET /api/traces?q=), and the values it binds. The text index finds the spans of any
 * version holding every word of the terms, the exact check keeps those whose texts hold the
 * terms themselves, and the traces they belong to are read again with FINAL, so only a span's
 * live version decides (its older versions may have held the text).
 */
export function spanTextCondition(search: TextSearch): { sql: string; values: Record<string, unknown> } {
  const candidates = spanTextCandidates(search);
  return {
    sql: `trace_id IN (
      SELECT trace_id FROM spans FINAL
      WHERE workspace_id = {workspaceId:String} AND is_deleted = 0 AND ${exactMatch(search.fields)}
        AND trace_id IN (${candidates.sql}))`,
    values: candidates.values,
  };
}

/**
 * A term without characters JSON escapes is inside the span's detail wherever it is inside one
 * of its searched texts (the detail holds them as JSON text): a check of the detail alone, which
 * parses no JSON, is then a superset of the exact one, enough to choose candidates.
 */
// eslint-disable-next-line no-control-regex
const jsonEscaped = /["\\/\u0000-\u001f]/;
const detailMatch = 'arrayAll(term -> positionCaseInsensitiveUTF8(detail, term) > 0, {searchTerms:Array(String)})';

/** The traces with a span of any version holding the terms: the read the text index narrows. */
export function spanTextCandidates(search: TextSearch): { sql: string; values: Record<string, unknown> } {
  return {
    sql: `
      SELECT trace_id FROM spans
      WHERE workspace_id = {workspaceId:String}
        AND ${indexedWords}
        AND ${search.terms.some((term) => jsonEscaped.test(term)) ? exactMatch(search.fields) : detailMatch}`,
    values: { searchTerms: search.terms, searchText: search.terms.join(' ') },
  };
}

/**
 * The traces with a span of any version holding every word of the terms by the text index
 * alone, up to `cap` of them: the index answers from its own lists (no text is read), so this
 * tells cheaply whether a search is selective, and which traces a selective one checks
 * (search-pages.ts).
 */
export const selectSearchCandidates = defineQuery({
  name: 'selectSearchCandidates',
  params: z.object({ workspaceId, search: textSearchSchema, cap: z.number().int().min(1) }),
  row: z.object({ trace_id: z.string() }),
  sql: ({ workspaceId, search, cap }) => ({
    values: { workspaceId, cap, searchText: search.terms.join(' ') },
    query: `
      SELECT DISTINCT trace_id FROM spans
      WHERE workspace_id = {workspaceId:String}
        AND ${indexedWords}
      LIMIT {cap:UInt32}`,
  }),
});

export type SearchHit = z.infer<typeof searchHit>;
const searchHit = z.object({
  trace_id: z.string(),
  span_id: z.string(),
  name: z.string(),
  input: z.string(),
  output: z.string(),
  status_message: z.string(),
  attributes: z.string(),
});

/**
 * For a page of search hits, or a batch of traces a broad search walks (search-pages.ts), each
 * trace's first live span (in start order) that holds every word by the index and every term in
 * its searched texts, with those texts, for its highlight (search.ts `highlightOf`).
 */
export const selectSearchHits = defineQuery({
  name: 'selectSearchHits',
  params: z.object({ workspaceId, traceIds, search: textSearchSchema }),
  row: searchHit,
  sql: ({ workspaceId, traceIds, search }) => ({
    values: { workspaceId, traceIds, searchTerms: search.terms, searchText: search.terms.join(' ') },
    query: `
      SELECT trace_id, span_id, name, input, output, status_message, ${searchedTexts.attributes} AS attributes
      FROM spans FINAL
      WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)} AND is_deleted = 0
        AND ${indexedWords} AND ${exactMatch(search.fields)}
      ORDER BY trace_id, start_time, span_id
      LIMIT 1 BY trace_id
      ${keyReadSettings}`,
  }),
});

/** The columns of a stored span that logs content rewrites (ingest/otlp/logs/log-records.ts). */
export type LatestSpanRow = Pick<
  SpanRow,
  'trace_id' | 'span_id' | 'detail' | 'trace_name' | 'session_id' | 'source' | 'environment' | 'service' | 'user_id' | 'tags'
>;

/** The newest live row of each span given, by trace and span id. */
export async function selectLatestSpans(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  keys: Array<{ traceId: string; spanId: string }>,
): Promise<LatestSpanRow[]> {
  const spans = await clickhouse.query({
    query: `
      SELECT trace_id, span_id, detail, trace_name, session_id, source, environment, service, user_id, tags, is_deleted
      FROM spans
      WHERE workspace_id = {workspaceId:String} AND trace_id IN {traceIds:Array(String)} AND span_id IN {spanIds:Array(String)} AND concat(trace_id, '/', span_id) IN {keys:Array(String)}
      ORDER BY trace_id, span_id, version DESC
      LIMIT 1 BY trace_id, span_id`,
    query_params: { workspaceId, ...spanKeyParams(keys) },
    format: 'JSONEachRow',
  });
  return (await spans.json<LatestSpanRow & { is_deleted: number }>()).filter((row) => row.is_deleted === 0);
}

// A trace read in two steps.

/**
 * The SQL of a trace read in two steps (span-tree-schemas.ts): the tree from the narrow span
 * columns, never `detail` (the one column holding payloads, up to megabytes per trace), and one
 * span's `detail`. Both are key reads led by the workspace (`FINAL` bounded by the primary key,
 * tombstones hidden), one thread each like the other key reads of this file.
 */

const traceKey = z.object({ workspaceId, traceId: z.string().min(1) });

/**
 * A span's tree fields in column order. Optional fields not sent are '' (strings) or null
 * (numbers), as ingest/ingest.ts toSpanRow stores them; times are ISO 8601 as `detail` has them.
 */
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
  nullableNumber, // input_tokens
  nullableNumber, // output_tokens
  nullableNumber, // total_tokens
  nullableNumber, // cache_read_tokens
  nullableNumber, // cache_write_tokens
  nullableNumber, // reasoning_tokens
  nullableNumber, // cost_usd
  costSourceSchema.or(z.literal('')), // cost_source
  nullableNumber, // ttft_ms
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

/** One live span's `detail` (the StoredSpan as JSON text, ingest/ingest.ts storedSpanOf), undefined when there is none. */
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
