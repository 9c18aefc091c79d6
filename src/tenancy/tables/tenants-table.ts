import type postgres from 'postgres';
import type { Sql } from '../../stores/postgres.js';
import type { ApiKey, CreateApiKey, CreateOrganization, Organization, User, Workspace } from '../model/schemas.js';

/**
 * The statements of the tenants (service/tenants.ts, the admin routes and the start-up):
 * organizations, workspaces, users, memberships and API keys. Rows come back with their times
 * as the driver gives them (`Date`); the service answers them as ISO text. A unique violation
 * is left to the caller (PostgreSQL's 23505), which says what conflicts.
 */

/** A row with the time columns `K` as the driver reads them. */
export type Dated<T, K extends keyof T> = Omit<T, K> & { [P in K]: Date | (null extends T[P] ? null : never) };
export type OrganizationRow = Dated<Organization, 'createdAt'>;
export type KeyRow = Dated<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt'>;
export type WorkspaceRow = Dated<Workspace, 'createdAt'>;
export type UserRow = Dated<User, 'createdAt'>;

const organizationColumns = (sql: Sql | postgres.TransactionSql) => sql`
  id, name, plan, rate_limit_per_minute as "rateLimitPerMinute", rate_limit_per_day as "rateLimitPerDay", created_at as "createdAt"`;
const keyColumns = (sql: Sql) => sql`
  id, name, scope, organization_id as "organizationId", workspace_id as "workspaceId", user_id as "userId", prefix,
  created_at as "createdAt", last_used_at as "lastUsedAt", revoked_at as "revokedAt"`;

export async function insertOrganization(sql: Sql, input: CreateOrganization): Promise<OrganizationRow> {
  const [row] = await sql<OrganizationRow[]>`
    insert into organizations (name, plan, rate_limit_per_minute, rate_limit_per_day)
    values (${input.name}, ${input.plan}, ${input.rateLimitPerMinute ?? null}, ${input.rateLimitPerDay ?? null})
    returning ${organizationColumns(sql)}`;
  return row!;
}

export async function selectOrganizationByName(sql: Sql, name: string): Promise<OrganizationRow | undefined> {
  const [row] = await sql<OrganizationRow[]>`select ${organizationColumns(sql)} from organizations where name = ${name}`;
  return row;
}

export async function selectOrganization(sql: Sql, id: string): Promise<OrganizationRow | undefined> {
  const [row] = await sql<OrganizationRow[]>`select ${organizationColumns(sql)} from organizations where id = ${id}`;
  return row;
}

/** An organization's plan and stored limits, its row locked until the transaction `tx` ends. */
export async function lockOrganizationPlan(
  tx: postgres.TransactionSql,
  id: string,
): Promise<{ plan: Organization['plan']; perMinute: number | null; perDay: number | null } | undefined> {
  const [current] = await tx<{ plan: Organization['plan']; perMinute: number | null; perDay: number | null }[]>`
    select plan, rate_limit_per_minute as "perMinute", rate_limit_per_day as "perDay"
    from organizations where id = ${id} for update`;
  return current;
}

export async function updateOrganizationPlan(
  tx: postgres.TransactionSql,
  id: string,
  plan: Organization['plan'],
  perMinute: number | null,
  perDay: number | null,
): Promise<OrganizationRow> {
  const [updated] = await tx<OrganizationRow[]>`
    update organizations
    set plan = ${plan}, rate_limit_per_minute = ${perMinute}, rate_limit_per_day = ${perDay}, updated_at = now()
    where id = ${id}
    returning ${organizationColumns(tx)}`;
  return updated!;
}

export async function insertWorkspace(sql: Sql, organizationId: string, name: string): Promise<WorkspaceRow> {
  const [row] = await sql<WorkspaceRow[]>`
    insert into workspaces (organization_id, name) values (${organizationId}, ${name})
    returning id, organization_id as "organizationId", name, created_at as "createdAt"`;
  return row!;
}

export async function selectWorkspace(sql: Sql, organizationId: string, name: string): Promise<WorkspaceRow | undefined> {
  const [row] = await sql<WorkspaceRow[]>`
    select id, organization_id as "organizationId", name, created_at as "createdAt"
    from workspaces where organization_id = ${organizationId} and name = ${name}`;
  return row;
}

/** Whether the workspace is one of the organization's. */
export async function workspaceOfOrganization(sql: Sql, workspaceId: string, organizationId: string): Promise<boolean> {
  const [ws] = await sql`select 1 from workspaces where id = ${workspaceId} and organization_id = ${organizationId}`;
  return ws !== undefined;
}

export async function insertUser(sql: Sql, email: string, externalSubject: string | null): Promise<UserRow> {
  const [row] = await sql<UserRow[]>`
    insert into users (email, external_subject) values (${email}, ${externalSubject})
    returning id, email, external_subject as "externalSubject", created_at as "createdAt"`;
  return row!;
}

export async function updateUserExternalSubject(sql: Sql, id: string, externalSubject: string | null): Promise<UserRow | undefined> {
  const [row] = await sql<UserRow[]>`
    update users set external_subject = ${externalSubject} where id = ${id}
    returning id, email, external_subject as "externalSubject", created_at as "createdAt"`;
  return row;
}

export async function userExists(sql: Sql, userId: string): Promise<boolean> {
  const [user] = await sql`select 1 from users where id = ${userId}`;
  return user !== undefined;
}

/** Makes the user a member of the organization (once: a second call answers the membership there is). */
export async function upsertMembership(
  sql: Sql,
  organizationId: string,
  userId: string,
): Promise<{ organizationId: string; userId: string; createdAt: Date }> {
  const [row] = await sql<{ organizationId: string; userId: string; createdAt: Date }[]>`
    insert into memberships (organization_id, user_id) values (${organizationId}, ${userId})
    on conflict (organization_id, user_id) do update set organization_id = excluded.organization_id
    returning organization_id as "organizationId", user_id as "userId", created_at as "createdAt"`;
  return row!;
}

export async function isMember(sql: Sql, userId: string, organizationId: string): Promise<boolean> {
  const [member] = await sql`select 1 from memberships where user_id = ${userId} and organization_id = ${organizationId}`;
  return member !== undefined;
}

export async function insertApiKey(sql: Sql, input: CreateApiKey, prefix: string, hash: Buffer): Promise<KeyRow> {
  const [row] = await sql<KeyRow[]>`
    insert into api_keys (name, scope, organization_id, workspace_id, user_id, prefix, hash)
    values (${input.name ?? null}, ${input.scope}, ${input.organizationId}, ${input.workspaceId ?? null},
            ${input.userId ?? null}, ${prefix}, ${hash})
    returning ${keyColumns(sql)}`;
  return row!;
}

export async function selectApiKeys(sql: Sql, organizationId: string): Promise<KeyRow[]> {
  return await sql<KeyRow[]>`
    select ${keyColumns(sql)} from api_keys where organization_id = ${organizationId} order by created_at, id`;
}

/** Revokes a key (kept revoked at its first revocation's time); undefined when there is no such key. */
export async function revokeKey(sql: Sql, id: string): Promise<KeyRow | undefined> {
  const [row] = await sql<KeyRow[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ${id} returning ${keyColumns(sql)}`;
  return row;
}

export async function selectKeyByHash(sql: Sql, hash: Buffer): Promise<{ id: string; revokedAt: Date | null } | undefined> {
  const [row] = await sql<{ id: string; revokedAt: Date | null }[]>`
    select id, revoked_at as "revokedAt" from api_keys where hash = ${hash}`;
  return row;
}

export async function countApiKeys(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from api_keys`;
  return row!.n;
}
