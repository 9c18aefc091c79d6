/**
 * The wire shapes of schemas.ts written as JSON by the engine, for the stored read models:
 * `traces.item` (a TraceListItem, built by the summary recompute) and, for rows stored
 * before `spans.detail` existed, a span's StoredSpan (built once by migration 0003).
 * Key order, omitted fields and time format follow rows.ts (storedSpanOf, fromStoredTime) and
 * schemas.ts, so the engine's text is the JSON the JavaScript writes
 * (test/integration/traces-migration-0003.test.ts compares them, key order included).
 */

/** One JSON member; `present` (SQL boolean) leaves it out when false. */
interface Member {
  key: string;
  value: string;
  present?: string;
}

/** A JSON object of members, in order, skipping absent ones. */
function jsonObject(members: Member[]): string {
  const parts = members.map(({ key, value, present }) => {
    const pair = `concat('${JSON.stringify(key)}:', ${value})`;
    return present === undefined ? pair : `if(${present}, ${pair}, '')`;
  });
  return `concat('{', arrayStringConcat(arrayFilter(x -> x != '', [${parts.join(', ')}]), ','), '}')`;
}

/** A DateTime64(6) as rows.ts fromStoredTime writes it: milliseconds unless microseconds are set. */
function wireTime(column: string): string {
  const full = `formatDateTime(${column}, '%Y-%m-%dT%H:%i:%S.%f', 'UTC')`;
  return `concat(if(toUnixTimestamp64Micro(${column}) % 1000 = 0, substring(${full}, 1, 23), ${full}), 'Z')`;
}

const text = (column: string) => `toJSONString(${column})`;
/** '' stored for "not sent" → the member is left out. */
const optionalText = (key: string, column: string): Member => ({ key, value: text(column), present: `${column} != ''` });
/** '' → JSON null. */
const nullableText = (key: string, column: string): Member => ({ key, value: `if(${column} = '', 'null', ${text(column)})` });
/** NULL stored for "not sent" → the member is left out. */
const optionalNumber = (key: string, column: string): Member => ({
  key,
  value: `toJSONString(assumeNotNull(${column}))`,
  present: `isNotNull(${column})`,
});
/** Columns holding JSON text ('' when not sent), spliced in as they are. */
const optionalJson = (key: string, column: string): Member => ({ key, value: column, present: `${column} != ''` });

const usageMembers = (c: (name: string) => string): Member[] => [
  optionalText('model', c('model')),
  optionalText('provider', c('provider')),
  optionalNumber('inputTokens', c('input_tokens')),
  optionalNumber('outputTokens', c('output_tokens')),
  optionalNumber('totalTokens', c('total_tokens')),
  optionalNumber('costUsd', c('cost_usd')),
];

/**
 * A span row's StoredSpan, from the columns `spans` had before `detail` (migration 0003):
 * rows.ts storedSpanOf in SQL.
 */
export function spanDetailFromColumns(c: (name: string) => string = (name) => name): string {
  return jsonObject([
    { key: 'spanId', value: text(c('span_id')) },
    optionalText('parentSpanId', c('parent_span_id')),
    { key: 'name', value: text(c('name')) },
    { key: 'kind', value: text(c('kind')) },
    optionalJson('input', c('input')),
    optionalJson('output', c('output')),
    { key: 'startTime', value: text(wireTime(c('start_time'))) },
    { key: 'endTime', value: text(wireTime(c('end_time'))) },
    { key: 'durationMs', value: text(c('duration_ms')) },
    ...usageMembers(c),
    { key: 'status', value: text(c('status')) },
    optionalText('statusMessage', c('status_message')),
    optionalJson('attributes', c('attributes')),
    optionalJson('events', c('events')),
    optionalJson('metadata', c('metadata')),
  ]);
}

/**
 * A summary row's TraceListItem, as schemas.ts traceListItemSchema gives it: '' becomes null
 * for name, sessionId, environment and traceKind, and unsent usage is left out. `c` maps a
 * `traces` column name to the expression holding its value: the column itself, or the
 * recompute's alias.
 */
export function traceItem(c: (name: string) => string = (name) => name): string {
  return jsonObject([
    { key: 'traceId', value: text(c('trace_id')) },
    nullableText('name', c('name')),
    nullableText('sessionId', c('session_id')),
    { key: 'source', value: text(c('source')) },
    nullableText('environment', c('environment')),
    nullableText('service', c('service')),
    nullableText('userId', c('user_id')),
    { key: 'tags', value: text(c('tags')) },
    { key: 'status', value: text(c('status')) },
    nullableText('traceKind', c('trace_kind')),
    { key: 'startTime', value: text(wireTime(c('start_time'))) },
    { key: 'endTime', value: `if(isNull(${c('end_time')}), 'null', ${text(wireTime(`assumeNotNull(${c('end_time')})`))})` },
    { key: 'durationMs', value: `if(isNull(${c('duration_ms')}), 'null', toJSONString(assumeNotNull(${c('duration_ms')})))` },
    ...usageMembers(c),
    { key: 'spanCount', value: text(c('span_count')) },
    { key: 'errorCount', value: text(c('error_count')) },
  ]);
}

/** The expressions migration files name as `{{sql:name}}` (clickhouse-ddl.ts). */
export const migrationExpressions: Record<string, string> = {
  spanDetailFromColumns: spanDetailFromColumns(),
  traceItem: traceItem(),
};
