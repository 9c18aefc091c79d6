import { AppError } from '../http/errors.js';
import { isStoreUnavailable } from '../http/error-handler.js';

/** How the ingest writer (write-batcher.ts) tells its callers and itself what went wrong. */

/** 503 with `Retry-After`: try again shortly. */
export const unavailable = (message: string) => new AppError('SERVICE_UNAVAILABLE', message, {}, { 'retry-after': '5' });

/** The 503 of a store that failed, is down or cannot keep up: the client retries, nothing is lost. */
export const storeUnavailable = () => unavailable('The trace store is unavailable; retry shortly');

/** A failure for the store's sake, worth trying again later: it is down, busy or short of something. */
export function retryable(error: unknown): boolean {
  if (isStoreUnavailable(error)) return true;
  const type = (error as { type?: unknown }).type;
  return typeof type === 'string' && transientEngineErrors.test(type);
}

/**
 * Engine errors that say "later", not "never": the store is busy or short of something.
 * A write failing alone with any other engine error is refused for its data (400), so a
 * client never retries a payload that cannot succeed.
 */
const transientEngineErrors =
  /MEMORY_LIMIT|TOO_MANY|TIMEOUT|NETWORK|SOCKET|UNAVAILABLE|ABORTED|READONLY|NOT_ENOUGH_SPACE|KEEPER|REPLICA|QUOTA/;

/**
 * What the caller of a failed write hears when answered once stored: the engine's own error,
 * unless the write failed alone (`isolated`) for its data, which answers 400.
 */
export function alone(error: unknown, isolated: boolean): unknown {
  if (!isolated || error instanceof AppError || retryable(error)) return error;
  const type = (error as { type?: unknown }).type;
  if (typeof type !== 'string') return error;
  return new AppError('VALIDATION_ERROR', `The trace store refused this payload (${type}); it was not stored`, {
    issues: [{ path: 'body', message: `was refused by the trace store (${type})` }],
  });
}
