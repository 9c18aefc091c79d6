import type { FastifyBaseLogger } from 'fastify';
import type { Plan } from '../../config.js';
import type { Sql } from '../../stores/postgres.js';
import type { KeyScope } from '../model/schemas.js';
import { hashApiKey, hashesEqual, keyPrefix } from '../model/keys.js';
import { AppError } from '../../http/wire/errors.js';
import { keysByPrefix, membershipOf, organizationOfWorkspace, touchKey, type KeyRow } from '../tables/credentials-table.js';
import type { CredentialCache } from './credential-cache.js';
import type { CustomLimits } from '../model/rate-limit-rules.js';

/** Who is calling and which workspace every read and write of the request is confined to. */
export interface AuthContext {
  workspaceId: string;
  organizationId: string;
  plan: Plan;
  customLimits: CustomLimits;
  principal: { kind: 'apiKey'; keyId: string; scope: KeyScope; userId: string | null } | { kind: 'oauth'; userId: string; subject: string };
}

/**
 * What authentication reads of a request: its headers, path, client address and logger. A
 * fastify request is one; so is a gRPC call, its metadata as headers (traces/otlp/grpc/).
 */
export interface CredentialRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly url: string;
  readonly ip: string;
  readonly log: FastifyBaseLogger;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** last_used_at is refreshed at most this often, so a busy key does not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function headerValue(request: CredentialRequest, name: string): string | undefined {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? undefined : first.trim();
}

function requireUuidHeader(request: CredentialRequest, name: string, why: string): string {
  const value = headerValue(request, name);
  if (value === undefined) {
    throw new AppError('VALIDATION_ERROR', `Header ${name} is required ${why}`, {
      issues: [{ path: `headers.${name}`, message: `is required ${why}` }],
    });
  }
  if (!uuidPattern.test(value)) {
    throw new AppError('VALIDATION_ERROR', `Header ${name} must be a UUID`, {
      issues: [{ path: `headers.${name}`, message: 'must be a UUID' }],
    });
  }
  return value.toLowerCase();
}

const outsideReach = (what: string) => new AppError('FORBIDDEN', `The ${what} is outside this credential's reach`);

/**
 * A header a key does not need may still be sent; when it is, it must name what the key
 * already reaches, so a caller never silently works in another workspace than it asked for.
 */
function requireOptionalMatch(request: CredentialRequest, name: string, expected: string, what: string) {
  if (headerValue(request, name) === undefined) return;
  if (requireUuidHeader(request, name, '') !== expected) throw outsideReach(what);
}

/**
 * Resolves the workspace of a user (through a user-scoped key or an OAuth token): the user
 * must belong to the organization named by x-organization-id, and the workspace named by
 * x-workspace-id must be one of that organization's.
 */
export async function resolveUserWorkspace(sql: Sql, request: CredentialRequest, userId: string) {
  const organizationId = requireUuidHeader(request, 'x-organization-id', 'for a user credential');
  const workspaceId = requireUuidHeader(request, 'x-workspace-id', 'for a user credential');
  const row = await membershipOf(sql, userId, organizationId, workspaceId);
  if (!row) throw outsideReach('organization');
  if (row.workspaceOrg !== organizationId) throw outsideReach('workspace');
  return {
    organizationId,
    workspaceId,
    plan: row.plan,
    customLimits: { perMinute: row.rateLimitPerMinute, perDay: row.rateLimitPerDay },
  };
}

export async function authenticateApiKey(
  sql: Sql,
  request: CredentialRequest,
  key: string,
  keys: Pick<CredentialCache, 'keysByPrefix'> = { keysByPrefix: (prefix) => keysByPrefix(sql, prefix) },
): Promise<AuthContext> {
  const hash = hashApiKey(key);
  const rows: KeyRow[] = await keys.keysByPrefix(keyPrefix(key));
  // The row is found by its public prefix; the secret part is compared in constant time.
  const row = rows.find((r) => hashesEqual(Buffer.from(r.hash), hash));
  if (!row || row.revokedAt !== null) {
    throw new AppError('UNAUTHORIZED', 'The API key is unknown or revoked', { reason: 'invalid_api_key' });
  }
  if (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // The row may be kept in memory (credential-cache.ts): it now tells the use just recorded.
    row.lastUsedAt = new Date();
    touchKey(sql, row.id).catch((error: unknown) => request.log.warn({ err: error }, 'could not record key use'));
  }
  const principal = { kind: 'apiKey' as const, keyId: row.id, scope: row.scope, userId: row.userId };
  const customLimits = { perMinute: row.rateLimitPerMinute, perDay: row.rateLimitPerDay };

  if (row.scope === 'workspace') {
    requireOptionalMatch(request, 'x-organization-id', row.organizationId, 'organization');
    requireOptionalMatch(request, 'x-workspace-id', row.workspaceId!, 'workspace');
    return { workspaceId: row.workspaceId!, organizationId: row.organizationId, plan: row.plan, customLimits, principal };
  }
  if (row.scope === 'organization') {
    requireOptionalMatch(request, 'x-organization-id', row.organizationId, 'organization');
    const workspaceId = requireUuidHeader(request, 'x-workspace-id', 'for an organization-scoped key');
    if ((await organizationOfWorkspace(sql, workspaceId)) !== row.organizationId) throw outsideReach('workspace');
    return { workspaceId, organizationId: row.organizationId, plan: row.plan, customLimits, principal };
  }
  const resolved = await resolveUserWorkspace(sql, request, row.userId!);
  // A user key is issued within one organization and reaches no other.
  if (resolved.organizationId !== row.organizationId) throw outsideReach('organization');
  return { ...resolved, principal };
}

/**
 * The secret of HTTP Basic credentials, `base64(publicKey:secretKey)`: what Langfuse SDKs send.
 * The secret part is a Loupe API key; the public part is not checked (the key alone names the
 * workspace). Undefined when the credentials are not of that shape.
 */
export function basicSecret(encoded: string): string | undefined {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const secret = colon === -1 ? '' : decoded.slice(colon + 1);
  return secret === '' ? undefined : secret;
}

/** Paths served for Langfuse SDKs, where Basic credentials are accepted. */
const basicAuthPrefix = '/api/public/';

export type BearerVerifier = (request: CredentialRequest, token: string) => Promise<AuthContext>;

export interface AuthenticatorOptions {
  verifyBearer?: BearerVerifier | undefined;
  /** Keys kept in memory (credential-cache.ts); without it every request reads PostgreSQL. */
  keys?: CredentialCache | undefined;
  /**
   * Basic credentials on every path, not only the Langfuse SDKs' (`/api/public/`): for a
   * listener that serves nothing else, such as OTLP/gRPC, where a Langfuse user's exporter sends them.
   */
  basicOnEveryPath?: boolean | undefined;
}

export function createAuthenticator(sql: Sql, { verifyBearer, keys, basicOnEveryPath = false }: AuthenticatorOptions = {}) {
  return async function authenticate(request: CredentialRequest): Promise<AuthContext> {
    const key = headerValue(request, 'x-api-key');
    if (key !== undefined) return await authenticateApiKey(sql, request, key, keys);
    const authorization = headerValue(request, 'authorization');
    if (authorization !== undefined) {
      const basic = /^Basic\s+(\S+)$/i.exec(authorization);
      if (basic && (basicOnEveryPath || request.url.startsWith(basicAuthPrefix))) {
        const secret = basicSecret(basic[1]!);
        if (secret === undefined) {
          throw new AppError('UNAUTHORIZED', 'Basic credentials must be base64(publicKey:secretKey) with a Loupe API key as the secret', {
            reason: 'malformed_authorization',
          });
        }
        return await authenticateApiKey(sql, request, secret, keys);
      }
      const match = /^Bearer\s+(\S+)$/i.exec(authorization);
      if (!match) {
        throw new AppError('UNAUTHORIZED', 'Authorization must be "Bearer <token>"', { reason: 'malformed_authorization' });
      }
      if (!verifyBearer) {
        throw new AppError('UNAUTHORIZED', 'OAuth bearer tokens are not enabled on this server', { reason: 'oauth_not_configured' });
      }
      return await verifyBearer(request, match[1]!);
    }
    throw new AppError('UNAUTHORIZED', 'Send an API key in x-api-key or a bearer token in Authorization', {
      reason: 'missing_credentials',
    });
  };
}
