import { configSchema, type Config } from '../../config.js';
import { validationError } from '../../http/wire/errors.js';

/**
 * What keeps a trace read cheap whatever the workspace's size: a bounded time window and
 * per-statement memory and time limits (docs/api.md, "Limits of trace reads").
 *
 * The limits go in each statement's own SETTINGS clause, never in `clickhouse_settings` or a
 * `SET`: the embedded engine's session keeps a SET for every later statement, ingest included
 * (stores/clickhouse.ts).
 */
export interface QueryLimits {
  maxMemoryBytes: number;
  maxExecutionMs: number;
  maxWindowDays: number;
  /**
   * A full-text search whose words the text index finds in this many traces or more walks the
   * list's traces newest first instead of checking every candidate (search-pages.ts).
   */
  searchScanFrom: number;
}

/** The default of `searchScanFrom`. */
export const defaultSearchScanFrom = 2000;

/** The window of a windowed read that names no bound: the last 30 days. */
export const defaultWindowDays = 30;
const dayMs = 24 * 3600_000;

export function queryLimitsOf(config: Config): QueryLimits {
  return {
    maxMemoryBytes: config.LOUPE_QUERY_MAX_MEMORY_BYTES,
    maxExecutionMs: config.LOUPE_QUERY_MAX_EXECUTION_MS,
    maxWindowDays: config.LOUPE_QUERY_MAX_WINDOW_DAYS,
    searchScanFrom: defaultSearchScanFrom,
  };
}

/** The limits of the configuration's defaults (callers outside the service: tests, tools). */
export const defaultQueryLimits: QueryLimits = queryLimitsOf(configSchema.parse({}));

/**
 * The settings to append to a statement: `SETTINGS …`. Overflow throws (never a silently partial
 * answer). The engine counts a thread's allocations in steps of up to 4 MiB
 * (max_untracked_memory); under a small limit the step shrinks with it, so the limit holds.
 */
export function limitSettings(limits: QueryLimits): string {
  const memory = Math.floor(limits.maxMemoryBytes);
  const step = Math.floor(memory / 64);
  const untracked = step < 4 * 1024 * 1024 ? `, max_untracked_memory = ${step}` : '';
  // On a cluster, a read's `IN (SELECT …)` over a sharded table runs once, on the node asked
  // (GLOBAL IN): a session's or a user's traces lie on every shard. No effect on one node.
  return `SETTINGS max_memory_usage = ${memory}${untracked}, max_execution_time = ${limits.maxExecutionMs / 1000}, timeout_overflow_mode = 'throw', distributed_product_mode = 'global'`;
}

export interface Window {
  /** ISO 8601, exclusive or inclusive as the caller's filter reads it. */
  from: string;
  to: string;
}

/**
 * The window a read covers: both bounds as given; only the lower one: up to now; only the upper
 * one: the 30 days before it; neither: the last 30 days. A window longer than the maximum, or
 * reversed, answers 400 naming the lower bound's parameter.
 */
export function resolveWindow(
  from: string | undefined,
  to: string | undefined,
  limits: QueryLimits,
  names: { from: string; to: string } = { from: 'startAfter', to: 'startBefore' },
  now = Date.now(),
): Window {
  const end = to !== undefined ? Date.parse(to) : now;
  const start = from !== undefined ? Date.parse(from) : end - defaultWindowDays * dayMs;
  const path = `querystring.${names.from}`;
  if (start > end) {
    throw validationError(`Invalid request: ${path}: must not be after ${names.to}`, [{ path, message: `must not be after ${names.to}` }]);
  }
  if (end - start > limits.maxWindowDays * dayMs) {
    const message = `the window from ${names.from} to ${names.to} (default now) may be at most ${limits.maxWindowDays} days`;
    throw validationError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
  }
  return { from: from ?? new Date(start).toISOString(), to: to ?? new Date(end).toISOString() };
}
