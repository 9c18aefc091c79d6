import type { ScoreOnTarget } from '../../contract/trace-scores.js';
import type { Score } from '../api/schemas.js';
import type { ScoreRow, TargetScoreRow } from '../tables/score-params.js';
import { fromStoredTime } from './stored-time.js';

/** A stored row as the API shows a score: empty texts as null, metadata parsed. */

const orNull = (text: string) => (text === '' ? null : text);

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

/** A whole score: the target's shape and the columns only a score's own read gives. */
export function toScore(row: ScoreRow): Score {
  return {
    ...toScoreOnTarget(row),
    metadata: row.metadata === '' ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    environment: orNull(row.environment),
    sessionId: orNull(row.session_id),
    configId: orNull(row.config_id),
    evalTraceId: orNull(row.eval_trace_id),
    createdAt: fromStoredTime(row.created_at_text),
  };
}
