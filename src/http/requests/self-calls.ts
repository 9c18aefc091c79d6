import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/**
 * Requests the app sends to its own routes in-process (`app.inject`) on behalf of a request it
 * has already admitted: the MCP tools read through the REST routes with the caller's own
 * credential, so each read is authenticated again, but the caller's rate limit was counted
 * once, for the request that asked. They carry a random token made when the app is built; it
 * never leaves the process, so no client can send it.
 */
export interface SelfCalls {
  /** The header to add to an in-process request. */
  readonly headers: Readonly<Record<string, string>>;
  /** Whether a request carries this app's token. */
  isSelfCall(this: void, request: FastifyRequest): boolean;
}

export const selfCallHeader = 'x-loupe-self-call';

export function createSelfCalls(): SelfCalls {
  const token = randomBytes(32);
  const text = token.toString('base64url');
  return {
    headers: { [selfCallHeader]: text },
    isSelfCall(request) {
      const sent = request.headers[selfCallHeader];
      if (typeof sent !== 'string') return false;
      const bytes = Buffer.from(sent, 'base64url');
      return bytes.length === token.length && timingSafeEqual(bytes, token);
    },
  };
}
