import type { Sql } from '../../stores/postgres.js';
import { AppError, notFound, validationError } from '../../http/wire/errors.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../model/keys.js';
import { credentialsChanged } from './credential-cache.js';
import type { ApiKey, CreateApiKey, CreateOrganization, Organization, UpdateOrganization, User, Workspace } from '../model/schemas.js';
import * as tenants from '../tables/tenants-table.js';

const iso = (v: Date | null) => (v === null ? null : v.toISOString());

const toOrganization = (r: tenants.OrganizationRow): Organization => ({ ...r, createdAt: r.createdAt.toISOString() });
const toKey = (r: tenants.KeyRow): ApiKey => ({
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
    return toOrganization(await tenants.insertOrganization(sql, input));
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', `An organization named ${input.name} exists`, { name: input.name });
    throw error;
  }
}

export async function findOrganizationByName(sql: Sql, name: string): Promise<Organization | undefined> {
  const row = await tenants.selectOrganizationByName(sql, name);
  return row ? toOrganization(row) : undefined;
}

export async function getOrganization(sql: Sql, id: string): Promise<Organization> {
  const row = await tenants.selectOrganization(sql, id);
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
    const current = await tenants.lockOrganizationPlan(tx, id);
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
    return tenants.updateOrganizationPlan(tx, id, plan, perMinute, perDay);
  });
  credentialsChanged(sql);
  return toOrganization(row);
}

export async function createWorkspace(sql: Sql, organizationId: string, name: string): Promise<Workspace> {
  await getOrganization(sql, organizationId);
  try {
    const row = await tenants.insertWorkspace(sql, organizationId, name);
    return { ...row, createdAt: row.createdAt.toISOString() };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', `The organization has a workspace named ${name}`, { name });
    throw error;
  }
}

export async function findWorkspace(sql: Sql, organizationId: string, name: string): Promise<Workspace | undefined> {
  const row = await tenants.selectWorkspace(sql, organizationId, name);
  return row ? { ...row, createdAt: row.createdAt.toISOString() } : undefined;
}

export async function createUser(sql: Sql, email: string, externalSubject?: string): Promise<User> {
  try {
    const row = await tenants.insertUser(sql, email, externalSubject ?? null);
    return { ...row, createdAt: row.createdAt.toISOString() };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', 'A user with that email or external subject exists');
    throw error;
  }
}

/** Links a user to the `sub` claim of their OAuth tokens (null unlinks). */
export async function setUserExternalSubject(sql: Sql, id: string, externalSubject: string | null): Promise<User> {
  try {
    const row = await tenants.updateUserExternalSubject(sql, id, externalSubject);
    if (!row) throw notFound('User', { userId: id });
    return { ...row, createdAt: row.createdAt.toISOString() };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', 'Another user has that external subject');
    throw error;
  }
}

export async function addMember(sql: Sql, organizationId: string, userId: string) {
  await getOrganization(sql, organizationId);
  if (!(await tenants.userExists(sql, userId))) throw notFound('User', { userId });
  const row = await tenants.upsertMembership(sql, organizationId, userId);
  return { ...row, createdAt: row.createdAt.toISOString() };
}

/**
 * Creates a key and answers it in plaintext, once. `plaintext` is only for the bootstrap key,
 * whose value the operator chose.
 */
export async function createApiKey(sql: Sql, input: CreateApiKey, plaintext: string = generateApiKey()): Promise<ApiKey & { key: string }> {
  await getOrganization(sql, input.organizationId);
  if (input.workspaceId && !(await tenants.workspaceOfOrganization(sql, input.workspaceId, input.organizationId))) {
    throw notFound('Workspace', { workspaceId: input.workspaceId, organizationId: input.organizationId });
  }
  if (input.userId && !(await tenants.isMember(sql, input.userId, input.organizationId))) {
    throw new AppError('VALIDATION_ERROR', 'The user is not a member of the organization', {
      issues: [{ path: 'body.userId', message: 'is not a member of the organization' }],
    });
  }
  try {
    const row = await tenants.insertApiKey(sql, input, keyPrefix(plaintext), hashApiKey(plaintext));
    return { ...toKey(row), key: plaintext };
  } catch (error) {
    if (pgCode(error) === '23505') throw new AppError('CONFLICT', 'That key exists');
    throw error;
  }
}

export async function listApiKeys(sql: Sql, organizationId: string): Promise<ApiKey[]> {
  await getOrganization(sql, organizationId);
  return (await tenants.selectApiKeys(sql, organizationId)).map(toKey);
}

export async function revokeApiKey(sql: Sql, id: string): Promise<ApiKey> {
  const row = await tenants.revokeKey(sql, id);
  if (!row) throw notFound('API key', { id });
  credentialsChanged(sql);
  return toKey(row);
}

export async function findKeyByPlaintext(sql: Sql, plaintext: string) {
  return tenants.selectKeyByHash(sql, hashApiKey(plaintext));
}

export const countApiKeys = (sql: Sql): Promise<number> => tenants.countApiKeys(sql);
