import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from './auth.js';
import { AppError } from '../http/errors.js';
import type { FailedAuthLimiter } from './failed-auth.js';

export type Authenticate = (request: FastifyRequest) => Promise<AuthContext>;
/** Runs after authentication; throws (429) when the organization is over its limit. */
export type AdmitRequest = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Runs `authenticate` behind the failed-attempt limit: a client address that failed too often
 * gets 429 before its credential is even looked at, and every 401 counts against it.
 */
export async function guardedAuthentication<T>(
  request: FastifyRequest,
  failedAuth: FailedAuthLimiter | undefined,
  authenticate: () => T | Promise<T>,
): Promise<T> {
  failedAuth?.check(request);
  try {
    return await authenticate();
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHORIZED') failedAuth?.record(request);
    throw error;
  }
}

/**
 * Every route registered inside runs only for an authenticated caller, with `request.auth`
 * naming the one workspace it may touch. Authentication runs on `onRequest`, before any
 * body is read, so an anonymous client cannot make the server parse a large body.
 */
export function registerAuthenticatedScope(
  app: FastifyInstance,
  options: { authenticate: Authenticate; admit?: AdmitRequest | undefined; failedAuth?: FailedAuthLimiter | undefined },
) {
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRequest', async (request, reply) => {
    request.auth = await guardedAuthentication(request, options.failedAuth, () => options.authenticate(request));
    if (options.admit) await options.admit(request, reply);
  });
}
