import { createHash } from 'node:crypto';
import { validationError } from '../../http/wire/errors.js';

/**
 * Opaque page cursors (keyset pagination): the sort key and id of the last row served, the
 * window the first page resolved (so "now" does not move under a walk) and the total the first
 * page counted. A page after a cursor starts strictly after that row in the sort order, so
 * pages never overlap, and rows ingested meanwhile never shift the rows still to come (an
 * offset would). The cursor also carries a digest of the query's filters: a cursor used with
 * other filters answers 400 instead of a page of another list.
 */
export interface CursorState {
  /** Digest of the query parameters other than limit, offset and cursor. */
  q: string;
  /** The last row's sort key, as the engine wrote it (toString). */
  k: string;
  /** The last row's id (trace, session or user id): the tie-break. */
  id: string;
  /** The window of the first page, when the read is windowed. */
  w?: [string, string];
  /** The total counted by the first page, when the list reports one. */
  t?: number;
}

export function queryDigest(params: Record<string, unknown>): string {
  const kept = Object.entries(params)
    .filter(([name, value]) => value !== undefined && !['limit', 'offset', 'cursor'].includes(name))
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify(kept)).digest('base64url').slice(0, 16);
}

export function encodeCursor(state: CursorState): string {
  return Buffer.from(JSON.stringify(state)).toString('base64url');
}

const invalid = (message: string) =>
  validationError(`Invalid request: querystring.cursor: ${message}`, [{ path: 'querystring.cursor', message }]);

export function decodeCursor(text: string, digest: string): CursorState {
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a cursor this API returned');
  }
  const s = state as Partial<CursorState> | null;
  const window = s?.w;
  if (
    typeof s !== 'object' ||
    s === null ||
    typeof s.q !== 'string' ||
    typeof s.k !== 'string' ||
    typeof s.id !== 'string' ||
    (window !== undefined &&
      !(Array.isArray(window) && window.length === 2 && window.every((v) => typeof v === 'string' && !Number.isNaN(Date.parse(v))))) ||
    (s.t !== undefined && !Number.isInteger(s.t))
  ) {
    throw invalid('is not a cursor this API returned');
  }
  if (s.q !== digest) throw invalid('belongs to a query with other parameters: send the same parameters as the first page');
  return s as CursorState;
}

/** The bound values of a keyset condition after a row (`{afterKey:…}`, `{afterId:String}`); nothing without one. */
export const afterValues = (after: { key: string; id: string } | undefined) => after && { afterKey: after.key, afterId: after.id };
