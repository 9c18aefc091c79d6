import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

/**
 * The service started in-process on a fresh LOUPE_DATA_DIR (`loupe-bench-<name>-…`) with
 * `apiKey` as its bootstrap key, a second client of its engine on the same directory (for loads
 * that skip HTTP, and for the engine's merges), and the key's workspace. With `raiseLimits`, the
 * bench organization gets limits far above what a benchmark calls, since the calls come faster
 * than a published plan allows. `close` stops both and removes the directory.
 */
export async function startBenchService(name: string, apiKey: string, { raiseLimits = false } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), `loupe-bench-${name}-`));
  const { loadConfig } = await import('../src/config.js');
  const { startServer } = await import('../src/server.js');
  const { openClickhouse } = await import('../src/stores/clickhouse.js');
  const adminToken = `bench-${name}-admin-token-0123456789`;
  const config = loadConfig({
    LOUPE_DATA_DIR: dir,
    PORT: '0',
    LOUPE_OTLP_GRPC_PORT: '0',
    LOG_LEVEL: 'warn',
    LOUPE_BOOTSTRAP_API_KEY: apiKey,
    ...(raiseLimits ? { LOUPE_ADMIN_TOKEN: adminToken } : {}),
  });
  const server = await startServer(config);
  const store = await openClickhouse({ database: config.CLICKHOUSE_DATABASE, dataDir: dir });
  const close = async () => {
    await store.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const me = await (await fetch(`${server.url}/api/me`, { headers: { 'x-api-key': apiKey } })).json();
    if (raiseLimits) {
      const raised = await fetch(`${server.url}/api/admin/organizations/${me.data.organizationId}`, {
        method: 'PATCH',
        headers: { 'x-admin-token': adminToken, 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'enterprise', rateLimitPerMinute: 100_000_000, rateLimitPerDay: 1_000_000_000 }),
      });
      if (raised.status !== 200) throw new Error(`raising the bench organization's limits answered ${raised.status}`);
    }
    return { dir, server, store, workspaceId: me.data.workspaceId as string, close };
  } catch (error) {
    await close();
    throw error;
  }
}
