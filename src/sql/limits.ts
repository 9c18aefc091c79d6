import type { Config } from '../config.js';
import { AppError } from '../http/wire/errors.js';

/**
 * Cost limits of one query, as the SETTINGS clause of the statement the service wraps around it
 * (not the client's settings: the embedded session would keep a SET for every later query).
 * Every value is a whole number from the parsed configuration; `readonly = 1` refuses writes
 * and any further change of settings inside the query.
 */
export function limitSettings(config: Config): string {
  const settings: Array<[string, string | number]> = [
    ['readonly', 1],
    ['max_execution_time', config.LOUPE_SQL_MAX_EXECUTION_MS / 1000],
    ['timeout_overflow_mode', "'throw'"],
    ['max_memory_usage', config.LOUPE_SQL_MAX_MEMORY_BYTES],
    ['max_rows_to_read', config.LOUPE_SQL_MAX_ROWS_TO_READ],
    ['max_bytes_to_read', config.LOUPE_SQL_MAX_BYTES_TO_READ],
    ['read_overflow_mode', "'throw'"],
    ['max_result_rows', config.LOUPE_SQL_MAX_RESULT_ROWS],
    ['max_result_bytes', config.LOUPE_SQL_MAX_RESULT_BYTES],
    ['result_overflow_mode', "'throw'"],
  ];
  // The engine counts a thread's allocations in steps of up to 4 MiB (max_untracked_memory);
  // under a small limit the step shrinks with it, so the limit holds (as traces/model/query-limits.ts).
  const step = Math.floor(config.LOUPE_SQL_MAX_MEMORY_BYTES / 64);
  if (step < 4 * 1024 * 1024) settings.push(['max_untracked_memory', step]);
  return settings.map(([name, value]) => `${name} = ${value}`).join(', ');
}

/** What a limit is called in the configuration, and what to do about it, by the engine's error type. */
type LimitKind = 'time' | 'memory' | 'size';
const limitErrors: Record<string, { kind: LimitKind; variable: keyof Config; what: string; advice: string }> = {
  TIMEOUT_EXCEEDED: {
    kind: 'time',
    variable: 'LOUPE_SQL_MAX_EXECUTION_MS',
    what: 'ran longer than allowed',
    advice: 'filter on start_time or trace_id, or aggregate fewer rows',
  },
  TOO_SLOW: {
    kind: 'time',
    variable: 'LOUPE_SQL_MAX_EXECUTION_MS',
    what: 'would run longer than allowed',
    advice: 'filter on start_time or trace_id',
  },
  MEMORY_LIMIT_EXCEEDED: {
    kind: 'memory',
    variable: 'LOUPE_SQL_MAX_MEMORY_BYTES',
    what: 'needed more memory than allowed',
    advice: 'group by fewer keys, or select fewer and narrower columns',
  },
  TOO_MANY_ROWS: {
    kind: 'size',
    variable: 'LOUPE_SQL_MAX_ROWS_TO_READ',
    what: 'read more rows than allowed',
    advice: 'filter on start_time or trace_id',
  },
  TOO_MANY_BYTES: {
    kind: 'size',
    variable: 'LOUPE_SQL_MAX_BYTES_TO_READ',
    what: 'read more bytes than allowed',
    advice: 'leave out input, output and events, or filter on start_time',
  },
};

/**
 * The 422 for an engine error that is a limit of the configuration, or undefined. `details.limit`
 * is the kind (`time`, `memory`, `size`), as for the other reads (http/requests/error-handler.ts);
 * `details.variable` names the setting to raise.
 */
export function limitError(type: string | undefined, message: string, config: Config): AppError | undefined {
  let limit = type ? limitErrors[type] : undefined;
  if (type === 'TOO_MANY_ROWS_OR_BYTES') {
    // The result limits share one error; its message says which ("max rows" or "max bytes").
    limit = /max rows/i.test(message)
      ? {
          kind: 'size' as const,
          variable: 'LOUPE_SQL_MAX_RESULT_ROWS' as const,
          what: 'answered more rows than allowed',
          advice: 'add a LIMIT, or aggregate',
        }
      : {
          kind: 'size' as const,
          variable: 'LOUPE_SQL_MAX_RESULT_BYTES' as const,
          what: 'answered more bytes than allowed',
          advice: 'add a LIMIT, or select fewer columns',
        };
  }
  if (!limit) return undefined;
  return new AppError(
    'QUERY_TOO_EXPENSIVE',
    `The query ${limit.what} (${limit.variable} = ${String(config[limit.variable])}): ${limit.advice}`,
    {
      limit: limit.kind,
      variable: limit.variable,
      value: config[limit.variable],
    },
  );
}
