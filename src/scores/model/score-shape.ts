import type { ScoreOnTarget } from '../../contract/trace-scores.js';
import type { Score } from '../api/schemas.js';
import type { TargetScoreRow } from '../tables/score-targets-table.js';
import type { ScoreRow } from '../tables/scores-table.js';
import { fromStoredTime } from './stored-time.js';

/** A stored row as the API shows a score: empty texts as null, metadata parsed. */

const orNull = (text: string) => (text === '' ? null : text);

export function toScore(row: ScoreRow): Score {
  return {
    id: row.id,
    name: row.name,
    dataType: row.data_type,
    value: row.value,
    stringValue: row.data_type === 'numeric' ? null : row.string_value,
    comment: orNull(row.comment),
    metadata: row.metadata === '' ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    source: row.source,
    environment: orNull(row.environment),
    traceId: orNull(row.trace_id),
    spanId: orNull(row.span_id),
    sessionId: orNull(row.session_id),
    authorId: orNull(row.author_id),
    configId: orNull(row.config_id),
    evalTraceId: orNull(row.eval_trace_id),
    timestamp: fromStoredTime(row.timestamp_text),
    createdAt: fromStoredTime(row.created_at_text),
  };
}

/** The slimmer shape a trace, a span or a list shows (from the score summary's columns). */
export function toScoreOnTarget(row: TargetScoreRow): ScoreOnTarget {
  return {
    id: row.id,
    name: row.name,
    dataType: row.data_type,
    value: row.value,
    stringValue: row.data_type === 'numeric' ? null : row.string_value,
    comment: orNull(row.comment),
    source: row.source,
    authorId: orNull(row.author_id),
    traceId: orNull(row.trace_id),
    spanId: orNull(row.span_id),
    timestamp: fromStoredTime(row.timestamp_text),
  };
}
