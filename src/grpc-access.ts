import type { Sql } from './stores/postgres.js';
import { createAuthenticator, type BearerVerifier } from './tenancy/service/auth.js';
import { authenticateCaller } from './tenancy/service/authenticated.js';
import type { CredentialCache } from './tenancy/service/credential-cache.js';
import type { FailedAuthLimiter } from './tenancy/service/failed-auth.js';
import { createKeyDirectory } from './tenancy/service/key-directory.js';
import type { RateLimiter } from './tenancy/service/rate-limit.js';
import type { AdmitCall } from './traces/api/grpc/server.js';

export interface GrpcAccessDeps {
  sql: Sql;
  /** The API keys the HTTP app keeps in memory too (credential-cache.ts), one cache per process. */
  keys: CredentialCache;
  verifyBearer?: BearerVerifier | undefined;
  /** The organization's rate limit, shared with HTTP; absent means none. */
  limiter?: Pick<RateLimiter, 'count'> | undefined;
  /** The failed-authentication limit per client address, shared with HTTP; absent means none. */
  failedAuth?: FailedAuthLimiter | undefined;
}

/**
 * How an OTLP/gRPC call is let in: the same credentials as the HTTP routes (an API key in
 * `x-api-key` with the workspace headers as metadata, a bearer token, or the Langfuse SDKs'
 * Basic credentials, which this listener takes on its every method), the same failed-attempt
 * limit per client address and the same rate limit per organization, counted in PostgreSQL.
 */
export function createGrpcAdmission(deps: GrpcAccessDeps): AdmitCall {
  const authenticate = createAuthenticator(deps.sql, { verifyBearer: deps.verifyBearer, keys: deps.keys, basicOnEveryPath: true });
  const keyDirectory = deps.failedAuth ? createKeyDirectory(deps.sql) : undefined;
  return async (caller) => {
    const auth = await authenticateCaller(caller, { authenticate, failedAuth: deps.failedAuth, keys: keyDirectory });
    const metadata = deps.limiter ? await deps.limiter.count(auth, caller.log) : {};
    const authorId = auth.principal.kind === 'apiKey' ? auth.principal.keyId : auth.principal.subject;
    return { workspaceId: auth.workspaceId, authorId, metadata };
  };
}
