import type { Sql } from '../src/stores/postgres.js';

/**
 * The service's stores on `dataDir` (embedded, unless the environment names servers), migrated,
 * with the service's config and logger at `warn`: what a benchmark's service process starts from.
 */
export async function openBenchStores(dataDir: string | undefined) {
  const { loadConfig } = await import('../src/config.js');
  const { createLogger, openStores, migrate } = await import('../src/server.js');
  const config = loadConfig({ LOUPE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  const log = createLogger(config);
  const stores = await openStores(config, log);
  await migrate(config, stores);
  return { config, log, stores };
}

/**
 * A workspace key of an enterprise organization named `name`, whose rate limits are far above
 * what any benchmark sends.
 */
export async function benchWorkspaceKey(sql: Sql, name: string) {
  const tenancy = await import('../src/tenancy/service/tenants.js');
  const organization = await tenancy.createOrganization(sql, { name, plan: 'enterprise', rateLimitPerMinute: 1e9, rateLimitPerDay: 1e9 });
  const workspace = await tenancy.createWorkspace(sql, organization.id, 'bench');
  const { key } = await tenancy.createApiKey(sql, { scope: 'workspace', organizationId: organization.id, workspaceId: workspace.id });
  return key;
}
