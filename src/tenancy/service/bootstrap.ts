import type { Plan } from '../../config.js';
import type { Sql } from '../../stores/postgres.js';
import * as tenancy from './tenants.js';

export type BootstrapResult =
  | { kind: 'configured'; created: boolean; revoked: boolean }
  | { kind: 'generated'; key: string; organizationId: string; workspaceId: string }
  | { kind: 'none' };

async function ensureDefaultWorkspace(sql: Sql, plan: Plan) {
  const organization =
    (await tenancy.findOrganizationByName(sql, 'default')) ??
    (await tenancy.createOrganization(sql, {
      name: 'default',
      plan,
      ...(plan === 'enterprise' ? { rateLimitPerMinute: 1000, rateLimitPerDay: 100_000 } : {}),
    }));
  const workspace =
    (await tenancy.findWorkspace(sql, organization.id, 'default')) ?? (await tenancy.createWorkspace(sql, organization.id, 'default'));
  return { organization, workspace };
}

/**
 * With a configured key: make sure the default organization, workspace and that key exist.
 * A configured key that was revoked stays revoked (revocation is deliberate).
 * Without one and with no key at all: create one, to be logged once by the caller.
 * Runs under the migration lock, so concurrent starts create nothing twice.
 */
export async function bootstrap(sql: Sql, options: { apiKey?: string | undefined; plan: Plan }): Promise<BootstrapResult> {
  if (options.apiKey) {
    const existing = await tenancy.findKeyByPlaintext(sql, options.apiKey);
    if (existing) return { kind: 'configured', created: false, revoked: existing.revokedAt !== null };
    const { organization, workspace } = await ensureDefaultWorkspace(sql, options.plan);
    await tenancy.createApiKey(
      sql,
      { scope: 'workspace', organizationId: organization.id, workspaceId: workspace.id, name: 'bootstrap' },
      options.apiKey,
    );
    return { kind: 'configured', created: true, revoked: false };
  }
  if ((await tenancy.countApiKeys(sql)) > 0) return { kind: 'none' };
  const { organization, workspace } = await ensureDefaultWorkspace(sql, options.plan);
  const created = await tenancy.createApiKey(sql, {
    scope: 'workspace',
    organizationId: organization.id,
    workspaceId: workspace.id,
    name: 'first key',
  });
  return { kind: 'generated', key: created.key, organizationId: organization.id, workspaceId: workspace.id };
}
