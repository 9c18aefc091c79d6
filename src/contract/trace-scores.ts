import { z } from 'zod';

/**
 * How the trace reads carry scores without importing the scores feature: the scores feature
 * implements this access (src/scores/service/trace-scores.ts) and the app hands it to the trace
 * routes (src/app.ts). Server-side only; not part of the client package's contract.
 */

/** A score as a trace or a span shows it. */
export const scoreOnTargetSchema = z.object({
  id: z.string(),
  name: z.string(),
  dataType: z.enum(['numeric', 'categorical', 'boolean']),
  value: z.number(),
  stringValue: z.string().nullable(),
  comment: z.string().nullable(),
  source: z.string(),
  authorId: z.string().nullable(),
  traceId: z.string().nullable(),
  spanId: z.string().nullable(),
  timestamp: z.string(),
});
export type ScoreOnTarget = z.infer<typeof scoreOnTargetSchema>;

/** Per score name, how many scores and their mean value (booleans as the share of true). */
export const scoreAveragesSchema = z
  .record(z.string(), z.object({ n: z.number().int(), mean: z.number() }))
  .meta({ description: 'Per score name: the count of live scores and their mean value (boolean: the share of true)' });
export type ScoreAverages = z.infer<typeof scoreAveragesSchema>;

/** A condition on traces by one score name: a numeric range, or a category. */
export interface TraceScoreCondition {
  name: string;
  min?: number | undefined;
  max?: number | undefined;
  value?: string | undefined;
}

/** SQL text and the values of its parameters, handed between the two features. */
export interface SqlPart {
  sql: string;
  values: Record<string, unknown>;
}

export interface TraceScores {
  /**
   * Resolves once the workspace's answered scores (with `traceIds`, those on these traces) are
   * readable: for a read outside the routes' read barrier (the trace list's score filter).
   */
  settled: (workspaceId: string, traceIds?: readonly string[]) => Promise<void>;
  /** The live scores whose target is the trace or one of its spans, oldest first. */
  ofTrace: (workspaceId: string, traceId: string) => Promise<ScoreOnTarget[]>;
  /** Per trace id, its scores' averages per name (traces without scores are absent). */
  averagesOfTraces: (workspaceId: string, traceIds: string[]) => Promise<Map<string, ScoreAverages>>;
  /** Per session id, the averages of the scores of its traces and of the session itself. */
  averagesOfSessions: (workspaceId: string, sessionIds: string[]) => Promise<Map<string, ScoreAverages>>;
  /** Per user id, the averages of the scores of the user's traces. */
  averagesOfUsers: (workspaceId: string, userIds: string[]) => Promise<Map<string, ScoreAverages>>;
  /** Tombstones every score of the trace and its spans (a trace deleted). */
  deleteOfTrace: (workspaceId: string, traceId: string) => Promise<void>;
  /**
   * An SQL condition on a column of trace ids (`trace_id` in the caller's statement) that holds
   * for traces with a live score matching `condition`: its text names only parameters prefixed
   * `score`, bound by `values`; the caller's statement must bind `workspaceId`.
   */
  traceCondition: (condition: TraceScoreCondition) => SqlPart;
  /**
   * A subquery of `(trace_id, key)` rows: each trace with a live score on it or on one of its
   * spans, once per score name (`key` the name), for the stats grouped by score. No parameters
   * of its own; the caller's statement must bind `workspaceId`.
   */
  traceNames: () => SqlPart;
  /**
   * Per group key, the averages of the live scores on the groups' traces and their spans:
   * `groups` a subquery of `(key, trace_id)` rows (a String key, a trace once per group it is in),
   * its parameters in its values and never named `workspaceId`. `settings` a statement's SETTINGS clause.
   */
  averagesOfGroups: (workspaceId: string, groups: SqlPart, settings?: string) => Promise<Map<string, ScoreAverages>>;
}
