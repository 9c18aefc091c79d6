import { RefusedTarget } from './target-guard.js';

/** Words for the failures of a connection; the system's own messages name the address it tried. */
const systemErrors: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host down',
  ENOTFOUND: 'the name was not found',
  EAI_AGAIN: 'the name could not be resolved (temporary failure)',
  EPIPE: 'connection closed while sending',
  EADDRNOTAVAIL: 'address not available',
  ERR_SOCKET_CONNECTION_TIMEOUT: 'connection timed out',
};

/**
 * What a failed outbound request is recorded and answered as. Never the address the name
 * resolved to: Node's errors of a connection ("connect ECONNREFUSED 10.0.0.5:443") carry it,
 * so an error with a code is described by its code alone, and a refusal by the guard's words.
 */
export function describeRequestError(error: unknown): string {
  if (error instanceof RefusedTarget) return `refused: ${error.message}`;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  // Trying each address of a name (autoSelectFamily) fails with an AggregateError of them all.
  if (typeof code !== 'string' && Array.isArray(errors) && errors.length > 0) return describeRequestError(errors[0]);
  if (typeof code === 'string') {
    const words = systemErrors[code];
    if (words) return `${words} (${code})`;
    // TLS and HTTP parser errors: their messages speak of certificates and bytes, not addresses,
    // but only the code is certain to hold none.
    return `request failed (${code})`;
  }
  if (error instanceof Error) return error.message || error.name;
  return 'request failed';
}
