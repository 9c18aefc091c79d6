import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthContext } from './auth.js';

export type Authenticate = (request: FastifyRequest) => Promise<AuthContext>;
/** Runs after authentication; throws (429) when the organization is over its limit. */
export type AdmitRequest = (request: FastifyRequest, reply: import('fastify').FastifyReply) => Promise<void>;

/**
 * Every route registered inside runs only for an authenticated caller, with `request.auth`
 * naming the one workspace it may touch. Authentication runs on `onRequest`, before any
 * body is read, so an anonymous client cannot make the server parse a large body.
 */
export function registerAuthenticatedScope(
  app: FastifyInstance,
  options: { authenticate: Authenticate; admit?: AdmitRequest | undefined },
) {
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.addHook('onRequest', async (request, reply) => {
    request.auth = await options.authenticate(request);
    if (options.admit) await options.admit(request, reply);
  });
}
