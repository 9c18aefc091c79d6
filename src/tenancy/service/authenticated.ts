import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { headerValue, type AuthContext, type CredentialRequest } from './auth.js';
import type { KeyDirectory } from './key-directory.js';
import { AppError } from '../../http/wire/errors.js';
import type { FailedAuthLimiter } from './failed-auth.js';

export type Authenticate = (request: CredentialRequest) => Promise<AuthContext>;
/** Runs after authentication; throws (429) when the organization is over its limit. */
export type AdmitRequest = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Runs `authenticate` behind the failed-attempt limit; every 401 counts against the client
 * address. An address over the limit is only slowed in its failures: a valid credential
 * still passes, an invalid one answers 429 (with Retry-After) instead of 401. `screen` tells
 * a credential that surely fails without database work (an unknown API key), so a flood of
 * guesses from that address never reaches the database; credentials checked without the
 * database anyway (an admin token, a JWT's signature) need none.
 */
export async function guardedAuthentication<T>(
  request: CredentialRequest,
  failedAuth: FailedAuthLimiter | undefined,
  authenticate: () => T | Promise<T>,
  screen?: () => Promise<boolean>,
): Promise<T> {
  const limited = failedAuth?.limited(request);
  if (limited && screen && !(await screen())) {
    failedAuth!.record(request);
    throw limited;
  }
  try {
    return await authenticate();
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHORIZED') {
      failedAuth?.record(request);
      if (limited) throw limited;
    }
    throw error;
  }
}

export interface CallerAuthentication {
  authenticate: Authenticate;
  failedAuth?: FailedAuthLimiter | undefined;
  /** Known live keys, to refuse guesses from an address over the limit without database work. */
  keys?: KeyDirectory | undefined;
}

/**
 * The caller's credentials checked behind the failed-attempt limit, whatever the protocol:
 * the routes' hook below, and OTLP/gRPC calls (src/grpc-access.ts).
 */
export async function authenticateCaller(request: CredentialRequest, options: CallerAuthentication): Promise<AuthContext> {
  const key = headerValue(request, 'x-api-key');
  const keys = options.keys;
  const screen = key !== undefined && keys ? () => keys.mayBeValid(key) : undefined;
  return await guardedAuthentication(request, options.failedAuth, () => options.authenticate(request), screen);
}

/**
 * Every route registered inside runs only for an authenticated caller, with `request.auth`
 * naming the one workspace it may touch. Authentication runs on `onRequest`, before any
 * body is read, so an anonymous client cannot make the server parse a large body.
 */
export function registerAuthenticatedScope(
  app: FastifyInstance,
  options: CallerAuthentication & {
    admit?: AdmitRequest | undefined;
    /**
     * In-process requests made for a request already admitted (http/requests/self-calls.ts): still
     * authenticated, not counted against the rate limit a second time.
     */
    admitted?: ((request: FastifyRequest) => boolean) | undefined;
  },
) {
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRequest', async (request, reply) => {
    request.auth = await authenticateCaller(request, options);
    if (options.admit && !options.admitted?.(request)) await options.admit(request, reply);
  });
}
