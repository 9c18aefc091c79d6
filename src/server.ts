import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Config } from './config.js';
import { buildApp, secretLogPaths } from './app.js';
import { migratePostgres, openPostgres, withMigrationLock, type PostgresStore } from './stores/postgres.js';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from './stores/clickhouse.js';
import { bootstrap, type BootstrapResult } from './tenancy/bootstrap.js';
import { oauthVerifierFromConfig } from './tenancy/oauth.js';
import { createRateLimiter } from './tenancy/rate-limit.js';
import { createFailedAuthLimiter } from './tenancy/failed-auth.js';
import { WriteBatcher } from './traces/write-batcher.js';
import { createWebhookWorker, type WebhookWorker } from './prompts/webhooks/worker.js';

export interface Stores {
  postgres: PostgresStore;
  clickhouse: ClickhouseStore;
  close(): Promise<void>;
}

export type Logger = pino.Logger;

export function createLogger(config: Config): Logger {
  return pino({ level: config.LOG_LEVEL, base: { service: 'loupe' }, redact: secretLogPaths });
}

export async function openStores(config: Config, log: Logger): Promise<Stores> {
  const postgres = await openPostgres({
    url: config.DATABASE_URL,
    dataDir: config.LOUPE_DATA_DIR,
    log: (line) => log.debug({ store: 'postgres' }, line),
  });
  let clickhouse: ClickhouseStore;
  try {
    clickhouse = await openClickhouse({
      url: config.CLICKHOUSE_URL,
      user: config.CLICKHOUSE_USER,
      password: config.CLICKHOUSE_PASSWORD,
      database: config.CLICKHOUSE_DATABASE,
      dataDir: config.LOUPE_DATA_DIR,
    });
  } catch (error) {
    await postgres.close();
    throw error;
  }
  return {
    postgres,
    clickhouse,
    close: async () => {
      await clickhouse.close();
      await postgres.close();
    },
  };
}

/** Both stores' migrations, one instance at a time (the PostgreSQL advisory lock covers both). */
export async function migrate(config: Config, stores: Stores) {
  let clickhouseApplied: string[] = [];
  const postgresApplied = await migratePostgres(stores.postgres.sql, async () => {
    clickhouseApplied = await migrateClickhouse(stores.clickhouse.client, {
      cluster: config.CLICKHOUSE_CLUSTER,
      database: config.CLICKHOUSE_DATABASE,
      retentionDays: config.LOUPE_RETENTION_DAYS,
    });
  });
  return { postgres: postgresApplied, clickhouse: clickhouseApplied };
}

/**
 * Migrations, then the first organization, workspace and key, all under the migration lock:
 * replicas starting together on an empty database bootstrap once, the others wait and find it.
 */
export async function prepareStores(config: Config, stores: Stores) {
  const applied = await migrate(config, stores);
  const first: BootstrapResult = await withMigrationLock(stores.postgres.sql, (tx) =>
    bootstrap(tx, { apiKey: config.LOUPE_BOOTSTRAP_API_KEY, plan: config.LOUPE_BOOTSTRAP_PLAN }),
  );
  return { applied, first };
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  stop(): Promise<void>;
}

/** Opens the stores, migrates, bootstraps the first key, listens. */
export async function startServer(config: Config, log: Logger = createLogger(config)): Promise<RunningServer> {
  const started = Date.now();
  const stores = await openStores(config, log);
  let app: FastifyInstance | undefined;
  let webhooks: WebhookWorker | undefined;
  try {
    const { applied, first } = await prepareStores(config, stores);
    if (applied.postgres.length + applied.clickhouse.length > 0) log.info({ applied }, 'migrations applied');
    if (first.kind === 'generated') {
      // Logged once: the key exists from now on, and only its hash is stored.
      log.warn(
        { apiKey: first.key, organizationId: first.organizationId, workspaceId: first.workspaceId },
        `created the first API key (workspace "default"); keep it, it is not shown again: ${first.key}`,
      );
    } else if (first.kind === 'configured' && first.revoked) {
      log.warn('LOUPE_BOOTSTRAP_API_KEY names a revoked key; it stays revoked');
    }
    const sql = stores.postgres.sql;
    app = await buildApp({
      config,
      sql,
      clickhouse: stores.clickhouse.client,
      writer: new WriteBatcher(stores.clickhouse.writeClient),
      log,
      verifyBearer: oauthVerifierFromConfig(sql, config),
      admit: createRateLimiter(sql).admit,
      failedAuth: createFailedAuthLimiter(),
    });
    const url = await app.listen({ port: config.PORT, host: config.HOST });
    // Every replica runs one: deliveries are claimed row by row, so workers never collide.
    webhooks = createWebhookWorker({ sql, allowPrivate: config.LOUPE_WEBHOOK_ALLOW_PRIVATE, log });
    webhooks.start();
    const worker = webhooks;
    log.info(
      { url, embeddedPostgres: stores.postgres.embedded, embeddedClickhouse: stores.clickhouse.embedded, startupMs: Date.now() - started },
      'loupe is listening',
    );
    const server = app;
    return {
      app: server,
      url,
      stop: async () => {
        await server.close(); // stops accepting, waits for requests in flight
        await worker.stop(); // waits for deliveries in flight; the undelivered stay in the outbox
        await stores.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => {});
    await webhooks?.stop().catch(() => {});
    await stores.close().catch(() => {});
    throw error;
  }
}
