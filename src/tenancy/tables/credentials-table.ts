import type { Plan } from '../../config.js';
import type { Sql } from '../../stores/postgres.js';
import type { KeyScope } from '../model/schemas.js';

/**
 * The statements authentication runs on every request (API keys, OAuth subjects, memberships);
 * the statements of the admin routes are in tenants-table.ts, those of the rate limit in rate-limit-table.ts.
 */

/** An API key as authentication needs it, with its organization's plan and stored limits. */
export interface KeyRow {
  id: string;
  scope: KeyScope;
  organizationId: string;
  workspaceId: string | null;
  userId: string | null;
  hash: Buffer;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  plan: Plan;
  rateLimitPerMinute: number | null;
  rateLimitPerDay: number | null;
}

/** Keys sharing a public prefix (almost always one); the caller compares the hash. */
export async function keysByPrefix(sql: Sql, prefix: string): Promise<KeyRow[]> {
  return await sql<KeyRow[]>`
    select k.id, k.scope, k.organization_id as "organizationId", k.workspace_id as "workspaceId", k.user_id as "userId",
           k.hash, k.revoked_at as "revokedAt", k.last_used_at as "lastUsedAt", o.plan,
           o.rate_limit_per_minute as "rateLimitPerMinute", o.rate_limit_per_day as "rateLimitPerDay"
    from api_keys k join organizations o on o.id = k.organization_id
    where k.prefix = ${prefix}`;
}

export async function touchKey(sql: Sql, keyId: string): Promise<void> {
  await sql`update api_keys set last_used_at = now() where id = ${keyId}`;
}

export async function organizationOfWorkspace(sql: Sql, workspaceId: string): Promise<string | undefined> {
  const [row] = await sql<{ organizationId: string }[]>`
    select organization_id as "organizationId" from workspaces where id = ${workspaceId}`;
  return row?.organizationId;
}

export interface MembershipRow {
  plan: Plan;
  rateLimitPerMinute: number | null;
  rateLimitPerDay: number | null;
  /** The organization of the named workspace (null when there is no such workspace). */
  workspaceOrg: string | null;
}

/** The user's membership of the organization, with the organization the named workspace belongs to; undefined for a non-member. */
export async function membershipOf(
  sql: Sql,
  userId: string,
  organizationId: string,
  workspaceId: string,
): Promise<MembershipRow | undefined> {
  const [row] = await sql<MembershipRow[]>`
    select o.plan, o.rate_limit_per_minute as "rateLimitPerMinute", o.rate_limit_per_day as "rateLimitPerDay",
           (select w.organization_id from workspaces w where w.id = ${workspaceId}) as "workspaceOrg"
    from memberships m join organizations o on o.id = m.organization_id
    where m.user_id = ${userId} and m.organization_id = ${organizationId}`;
  return row;
}

/** The user an OAuth `sub` claim names, through users.external_subject. */
export async function userBySubject(sql: Sql, subject: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`select id from users where external_subject = ${subject}`;
  return row?.id;
}

/** The prefix and hash of each live key, with when it was made: every one, or with `since` those made from then on (the key directory's reads). */
export async function liveKeyHashes(sql: Sql, since?: Date): Promise<{ prefix: string; hash: Buffer; createdAt: Date }[]> {
  return since === undefined
    ? await sql<{ prefix: string; hash: Buffer; createdAt: Date }[]>`
        select prefix, hash, created_at as "createdAt" from api_keys where revoked_at is null`
    : await sql<{ prefix: string; hash: Buffer; createdAt: Date }[]>`
        select prefix, hash, created_at as "createdAt" from api_keys
        where created_at >= ${since} and revoked_at is null`;
}
