import { z } from 'zod';
import { insertJsonLines, type ClickHouseClient } from '../../stores/clickhouse.js';
import { defineQuery } from '../../stores/clickhouse-query.js';
import type { PromptFiguresReader } from '../../contract/prompt-figures.js';
import { toStoredTime } from '../model/stored-time.js';
import { spanFactsSchema, type SpanRow } from './span-rows.js';
import { finiteOrNull } from '../model/finite.js';
import { textSearchSchema, type SearchField, type TextSearch } from '../model/search.js';
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

/**
 * Reads of a few traces by primary key: more threads only add start-up cost. In the statement,
 * not in clickhouse_settings: the embedded session would keep it for every later query.
 */
export const keyReadSettings = 'SETTINGS max_threads = 1';

const traceIds = z.array(z.string()).min(1);
const nullableNumber = z.number().nullable();

export async function insertSpanRows(clickhouse: ClickHouseClient, rows: SpanRow[]): Promise<void> {
  if (rows.length === 0) return;
  await clickhouse.insert({ table: 'spans', values: rows, format: 'JSONEachRow' });
}

/**
 * The same insert from rows already encoded, one JSON object a line, as UTF-8 bytes (the writer
 * encodes each request's rows as it takes them: write-batcher.ts, pending-lines.ts), handed to
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
