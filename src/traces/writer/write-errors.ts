import { AppError } from '../../http/wire/errors.js';
import { isStoreUnavailable } from '../../http/requests/error-handler.js';

/** How the ingest writer (write-batcher.ts) tells its callers and itself what went wrong. */

/** 503 with `Retry-After`: try again shortly. */
export const unavailable = (message: string) => new AppError('SERVICE_UNAVAILABLE', message, {}, { 'retry-after': '5' });

/** The 503 of a store that failed, is down or cannot keep up: the client retries, nothing is lost. */
export const storeUnavailable = () => unavailable('The trace store is unavailable; retry shortly');

/** A failure for the store's sake, worth trying again later: it is down, busy or short of something. */
export function retryable(error: unknown): boolean {
  if (isStoreUnavailable(error) || diskFullOf(error) !== undefined) return true;
  const type = (error as { type?: unknown }).type;
  return typeof type === 'string' && transientEngineErrors.test(type);
}

/**
 * Engine errors that say "later", not "never": the store is busy or short of something, or one
 * of its own parts is unreadable (CORRUPTED_DATA: a disk that filled while the engine wrote a
 * part leaves one, e.g. an empty marks file), which is the store's fault, never the payload's.
 * A write failing alone with any other engine error is refused for its data (400), so a
 * client never retries a payload that cannot succeed.
 */
const transientEngineErrors =
  /MEMORY_LIMIT|TOO_MANY|TIMEOUT|NETWORK|SOCKET|UNAVAILABLE|ABORTED|READONLY|NOT_ENOUGH_SPACE|KEEPER|REPLICA|QUOTA|CORRUPTED_DATA/;

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

const diskFullCodes = new Set(['ENOSPC', 'EDQUOT']);

/**
 * How a failed write to the ingest log is told: its code (with what it means, for ENOSPC and
 * EDQUOT), and whether the disk is full.
 */
export function ingestLogFailure(error: unknown): { code: string; diskFull: boolean } {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return { code: 'error', diskFull: false };
  if (code === 'ENOSPC') return { code: 'ENOSPC: no space left on device', diskFull: true };
  if (code === 'EDQUOT') return { code: 'EDQUOT: disk quota exceeded', diskFull: true };
  return { code, diskFull: false };
}

/** The engine's message when a flush failed because its disk is full, else undefined. */
export function diskFullOf(error: unknown): string | undefined {
  const { type, code, message } = error as { type?: unknown; code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (type === 'NOT_ENOUGH_SPACE' || (typeof code === 'string' && diskFullCodes.has(code)) || /No space left on device/i.test(text)) {
    return text.split('\n')[0]!.trim().slice(0, 200) || 'no space left on device';
  }
  return undefined;
}
