import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound, validationError } from '../../http/wire/errors.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../model/keys.js';
import { credentialsChanged } from './credential-cache.js';
import type { ApiKey, CreateApiKey, CreateOrganization, Organization, UpdateOrganization, User, Workspace } from '../model/schemas.js';

const iso = (v: Date | null) => (v === null ? null : v.toISOString());

const organizationColumns = (sql: Sql) => sql`
  id, name, plan, rate_limit_per_minute as "rateLimitPerMinute", rate_limit_per_day as "rateLimitPerDay", created_at as "createdAt"`;
const keyColumns = (sql: Sql) => sql`
  id, name, scope, organization_id as "organizationId", workspace_id as "workspaceId", user_id as "userId", prefix,
  created_at as "createdAt", last_used_at as "lastUsedAt", revoked_at as "revokedAt"`;

type Dated<T, K extends keyof T> = Omit<T, K> & { [P in K]: Date | (null extends T[P] ? null : never) };

const toOrganization = (r: Dated<Organization, 'createdAt'>): Organization => ({ ...r, createdAt: r.createdAt.toISOString() });
const toKey = (r: Dated<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt'>): ApiKey => ({
  ...r,
  createdAt: r.createdAt.toISOString(),
  lastUsedAt: iso(r.lastUsedAt),
  revokedAt: iso(r.revokedAt),
});

function pgCode(error: unknown): string | undefined {
  return (error as { code?: string }).code;
}

export async function createOrganization(sql: Sql, input: CreateOrganization): Promise<Organization> {
  try {
    const [row] = await sql<Dated<Organization, 'createdAt'>[]>`
      insert into organizations (name, plan, rate_limit_per_minute, rate_limit_per_day)
      values (${input.name}, ${input.plan}, ${input.rateLimitPerMinute ?? null}, ${input.rateLimitPerDay ?? null})
      returning ${organizationColumns(sql)}`;
    return toOrganization(row!);
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', `An organization named ${input.name} exists`, { name: input.name });
    throw error;
  }
}

export async function findOrganizationByName(sql: Sql, name: string): Promise<Organization | undefined> {
  const [row] = await sql<Dated<Organization, 'createdAt'>[]>`select ${organizationColumns(sql)} from organizations where name = ${name}`;
  return row ? toOrganization(row) : undefined;
}

export async function getOrganization(sql: Sql, id: string): Promise<Organization> {
  const [row] = await sql<Dated<Organization, 'createdAt'>[]>`select ${organizationColumns(sql)} from organizations where id = ${id}`;
  if (!row) throw notFound('Organization', { organizationId: id });
  return toOrganization(row);
}

/**
 * Changes an organization's plan or limits. Enterprise keeps its own limits (given now or
 * stored before); the other plans follow their published numbers, so theirs are cleared.
 * Read and write under a row lock, so two changes cannot mix into an enterprise without limits.
 */
export async function updateOrganization(sql: Sql, id: string, input: UpdateOrganization): Promise<Organization> {
  const row = await sql.begin(async (tx) => {
    const [current] = await tx<{ plan: Organization['plan']; perMinute: number | null; perDay: number | null }[]>`
      select plan, rate_limit_per_minute as "perMinute", rate_limit_per_day as "perDay"
      from organizations where id = ${id} for update`;
    if (!current) throw notFound('Organization', { organizationId: id });
    const plan = input.plan ?? current.plan;
    let perMinute: number | null = null;
    let perDay: number | null = null;
    if (plan === 'enterprise') {
      perMinute = input.rateLimitPerMinute ?? current.perMinute;
      perDay = input.rateLimitPerDay ?? current.perDay;
      const missing = [...(perMinute === null ? ['rateLimitPerMinute'] : []), ...(perDay === null ? ['rateLimitPerDay'] : [])];
      if (missing.length > 0) {
        throw validationError(
          'The enterprise plan needs its own rate limits',
          missing.map((field) => ({ path: `body.${field}`, message: 'is required for the enterprise plan' })),
        );
      }
    } else if (input.rateLimitPerMinute !== undefined || input.rateLimitPerDay !== undefined) {
      throw validationError('Only the enterprise plan takes its own rate limits', [
        { path: 'body.plan', message: 'only the enterprise plan takes its own rate limits' },
      ]);
    }
    const [updated] = await tx<Dated<Organization, 'createdAt'>[]>`
      update organizations
      set plan = ${plan}, rate_limit_per_minute = ${perMinute}, rate_limit_per_day = ${perDay}, updated_at = now()
      where id = ${id}
      returning id, name, plan, rate_limit_per_minute as "rateLimitPerMinute", rate_limit_per_day as "rateLimitPerDay",
                created_at as "createdAt"`;
    return updated!;
  });
  credentialsChanged(sql);
  return toOrganization(row);
}

export async function createWorkspace(sql: Sql, organizationId: string, name: string): Promise<Workspace> {
  await getOrganization(sql, organizationId);
  try {
    const [row] = await sql<(Omit<Workspace, 'createdAt'> & { createdAt: Date })[]>`
      insert into workspaces (organization_id, name) values (${organizationId}, ${name})
      returning id, organization_id as "organizationId", name, created_at as "createdAt"`;
    return { ...row!, createdAt: row!.createdAt.toISOString() };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', `The organization has a workspace named ${name}`, { name });
    throw error;
  }
}

export async function findWorkspace(sql: Sql, organizationId: string, name: string): Promise<Workspace | undefined> {
  const [row] = await sql<(Omit<Workspace, 'createdAt'> & { createdAt: Date })[]>`
    select id, organization_id as "organizationId", name, created_at as "createdAt"
    from workspaces where organization_id = ${organizationId} and name = ${name}`;
  return row ? { ...row, createdAt: row.createdAt.toISOString() } : undefined;
}

export async function createUser(sql: Sql, email: string, externalSubject?: string): Promise<User> {
  try {
    const [row] = await sql<(Omit<User, 'createdAt'> & { createdAt: Date })[]>`
      insert into users (email, external_subject) values (${email}, ${externalSubject ?? null})
      returning id, email, external_subject as "externalSubject", created_at as "createdAt"`;
    return { ...row!, createdAt: row!.createdAt.toISOString() };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', 'A user with that email or external subject exists');
    throw error;
  }
}

/** Links a user to the `sub` claim of their OAuth tokens (null unlinks). */
export async function setUserExternalSubject(sql: Sql, id: string, externalSubject: string | null): Promise<User> {
  try {
    const [row] = await sql<(Omit<User, 'createdAt'> & { createdAt: Date })[]>`
      update users set external_subject = ${externalSubject} where id = ${id}
      returning id, email, external_subject as "externalSubject", created_at as "createdAt"`;
    if (!row) throw notFound('User', { userId: id });
    return { ...row, createdAt: row.createdAt.toISOString() };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', 'Another user has that external subject');
    throw error;
  }
}

export async function addMember(sql: Sql, organizationId: string, userId: string) {
  await getOrganization(sql, organizationId);
  const [user] = await sql`select 1 from users where id = ${userId}`;
  if (!user) throw notFound('User', { userId });
  const [row] = await sql<{ organizationId: string; userId: string; createdAt: Date }[]>`
    insert into memberships (organization_id, user_id) values (${organizationId}, ${userId})
    on conflict (organization_id, user_id) do update set organization_id = excluded.organization_id
    returning organization_id as "organizationId", user_id as "userId", created_at as "createdAt"`;
  return { ...row!, createdAt: row!.createdAt.toISOString() };
}

/**
 * Creates a key and answers it in plaintext, once. `plaintext` is only for the bootstrap key,
 * whose value the operator chose.
 */
export async function createApiKey(sql: Sql, input: CreateApiKey, plaintext: string = generateApiKey()): Promise<ApiKey & { key: string }> {
  await getOrganization(sql, input.organizationId);
  if (input.workspaceId) {
    const [ws] = await sql`select 1 from workspaces where id = ${input.workspaceId} and organization_id = ${input.organizationId}`;
    if (!ws) throw notFound('Workspace', { workspaceId: input.workspaceId, organizationId: input.organizationId });
  }
  if (input.userId) {
    const [member] = await sql`select 1 from memberships where user_id = ${input.userId} and organization_id = ${input.organizationId}`;
    if (!member) {
      throw new AppError('VALIDATION_ERROR', 'The user is not a member of the organization', {
        issues: [{ path: 'body.userId', message: 'is not a member of the organization' }],
      });
    }
  }
  try {
    const [row] = await sql<Dated<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt'>[]>`
      insert into api_keys (name, scope, organization_id, workspace_id, user_id, prefix, hash)
      values (${input.name ?? null}, ${input.scope}, ${input.organizationId}, ${input.workspaceId ?? null},
              ${input.userId ?? null}, ${keyPrefix(plaintext)}, ${hashApiKey(plaintext)})
      returning ${keyColumns(sql)}`;
    return { ...toKey(row!), key: plaintext };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', 'That key exists');
    throw error;
  }
}

export async function listApiKeys(sql: Sql, organizationId: string): Promise<ApiKey[]> {
  await getOrganization(sql, organizationId);
  const rows = await sql<Dated<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt'>[]>`
    select ${keyColumns(sql)} from api_keys where organization_id = ${organizationId} order by created_at, id`;
  return rows.map(toKey);
}

export async function revokeApiKey(sql: Sql, id: string): Promise<ApiKey> {
  const [row] = await sql<Dated<ApiKey, 'createdAt' | 'lastUsedAt' | 'revokedAt'>[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ${id} returning ${keyColumns(sql)}`;
  if (!row) throw notFound('API key', { id });
  credentialsChanged(sql);
  return toKey(row);
}

export async function findKeyByPlaintext(sql: Sql, plaintext: string) {
  const [row] = await sql<{ id: string; revokedAt: Date | null }[]>`
    select id, revoked_at as "revokedAt" from api_keys where hash = ${hashApiKey(plaintext)}`;
  return row;
}

export async function countApiKeys(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from api_keys`;
  return row!.n;
}
