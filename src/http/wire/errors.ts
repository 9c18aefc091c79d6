/** The one list of error codes and the status each answers with. */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  QUERY_TOO_EXPENSIVE: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  MODEL_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ValidationIssue {
  path: string;
  message: string;
}

/** An error meant for the client: its code, message and details are sent as they are. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorStatus[code];
  }
}

export const notFound = (what: string, details: Record<string, unknown> = {}) => new AppError('NOT_FOUND', `${what} not found`, details);

export const validationError = (message: string, issues: ValidationIssue[]) => new AppError('VALIDATION_ERROR', message, { issues });

/** Turns zod issue paths into one dotted path: `body.traces.0.spanId`. */
export function issuePath(prefix: string, path: ReadonlyArray<PropertyKey>): string {
  return [prefix, ...path.map(String)].filter((p) => p !== '').join('.');
}

/**
 * One issue per path: the first one zod reports, which is the most specific (a format
 * check comes before the refinements that build on it).
 */
export function firstIssuePerPath<T extends { path: ReadonlyArray<PropertyKey> }>(issues: readonly T[]): T[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = issue.path.map(String).join('\u0000');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
