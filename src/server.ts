import { setPriority } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Config } from './config.js';
import {
  buildApp,
  credentialCacheFor,
  evaluatorWorkerFor,
  newScoreWriter,
  secretLogPaths,
  webhookTargetGuard,
  type ScoreWriter,
} from './app.js';
import type { EvaluatorWorker } from './evaluators/service/worker.js';
import { createGrpcAdmission } from './grpc-access.js';
import { startOtlpGrpcServer, type OtlpGrpcServer } from './traces/api/grpc/server.js';
import { migratePostgres, openPostgres, withMigrationLock, type PostgresStore } from './stores/postgres.js';
import { migrateClickhouse, openClickhouse, type ClickhouseStore } from './stores/clickhouse.js';
import { startRetention } from './retention/engine-retention.js';
import { bootstrap, type BootstrapResult } from './tenancy/service/bootstrap.js';
import { oauthVerifierFromConfig } from './tenancy/service/oauth.js';
import { createRateLimiter } from './tenancy/service/rate-limit.js';
import { createFailedAuthLimiter } from './tenancy/service/failed-auth.js';
import { WriteBatcher, type WriteBatcherOptions } from './traces/writer/write-batcher.js';
import { IngestLog, type Recovered } from './traces/writer/ingest-log.js';
import type { ClickHouseClient } from './stores/clickhouse.js';
import { postgresOutage } from './http/requests/outage.js';
import { createWebhookWorker, type WebhookWorker } from './prompts/service/webhook-worker.js';
import { enqueueEvent } from './prompts/tables/webhook-outbox-table.js';
import { monitorMetricReader } from './traces/tables/monitor-metrics-table.js';
import { createMonitorEvaluator } from './monitors/service/evaluator.js';
import { createMonitorScheduler, type MonitorScheduler } from './monitors/service/scheduler.js';
import { boundConnections, connectionBounds } from './http/server/connection-bounds.js';
import { openFileLimit } from './http/server/open-file-limit.js';

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
    restarts: { log: log.child({ store: 'postgres' }) },
  });
  let clickhouse: ClickhouseStore;
  try {
    clickhouse = await openClickhouse({
      url: config.CLICKHOUSE_URL,
      user: config.CLICKHOUSE_USER,
      password: config.CLICKHOUSE_PASSWORD,
      database: config.CLICKHOUSE_DATABASE,
      dataDir: config.LOUPE_DATA_DIR,
      readNice: config.LOUPE_REQUEST_NICE,
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
  // The trace store's copy of the retention settings, with this start's LOUPE_RETENTION_DAYS.
  await startRetention(stores.postgres.sql, stores.clickhouse.client, config.LOUPE_RETENTION_DAYS ?? null, {
    cluster: config.CLICKHOUSE_CLUSTER,
  });
  const first: BootstrapResult = await withMigrationLock(stores.postgres.sql, (tx) =>
    bootstrap(tx, { apiKey: config.LOUPE_BOOTSTRAP_API_KEY, plan: config.LOUPE_BOOTSTRAP_PLAN }),
  );
  return { applied, first };
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** The OTLP/gRPC listener's port; undefined when LOUPE_OTLP_GRPC_PORT is 0. */
  grpcPort: number | undefined;
  stop(): Promise<void>;
}

/** Opens the stores, migrates, bootstraps the first key, listens. */
export async function startServer(config: Config, log: Logger = createLogger(config)): Promise<RunningServer> {
  const started = Date.now();
  const stores = await openStores(config, log);
  let app: FastifyInstance | undefined;
  let writer: WriteBatcher | undefined;
  let scoreWriter: ScoreWriter | undefined;
  let webhooks: WebhookWorker | undefined;
  let evaluations: EvaluatorWorker | undefined;
  let monitors: MonitorScheduler | undefined;
  let grpc: OtlpGrpcServer | undefined;
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
    raiseRequestPriority(config, log);
    writer = openWriter(config, stores.clickhouse.writeClient, log);
    scoreWriter = openScoreWriter(config, stores.clickhouse.writeClient, log);
    // One of each per process, shared by HTTP and OTLP/gRPC: a key, a budget, a failure count.
    const verifyBearer = oauthVerifierFromConfig(sql, config);
    const limiter = createRateLimiter(sql);
    const failedAuth = createFailedAuthLimiter();
    const keys = credentialCacheFor(sql, config, log);
    const webhookGuard = webhookTargetGuard(config);
    app = await buildApp({
      config,
      webhookGuard,
      sql,
      clickhouse: stores.clickhouse.client,
      writer,
      scoreWriter,
      log,
      verifyBearer,
      admit: limiter.admit,
      failedAuth,
      keys,
      postgresOutage: () => postgresOutage(stores.postgres.condition()),
    });
    const bounds = connectionBounds(config, openFileLimit());
    if (bounds.lowered) {
      log.warn(
        { asked: bounds.lowered.from, total: bounds.total, openFileLimit: bounds.openFileLimit },
        'LOUPE_MAX_CONNECTIONS is more than the open-file limit leaves room for; raise the limit (ulimit -n) to allow more',
      );
    }
    boundConnections(app.server, bounds, log);
    const url = await app.listen({ port: config.PORT, host: config.HOST });
    if (config.LOUPE_OTLP_GRPC_PORT !== 0) {
      grpc = await startOtlpGrpcServer({
        host: config.HOST,
        port: config.LOUPE_OTLP_GRPC_PORT,
        maxMessageBytes: config.LOUPE_BODY_LIMIT,
        ingest: app.traceIngest,
        admit: createGrpcAdmission({ sql, keys, verifyBearer, limiter, failedAuth }),
        log,
        recordScores: app.recordOtelScores,
      });
    }
    // Every replica runs one: deliveries are claimed row by row, so workers never collide.
    webhooks = createWebhookWorker({ sql, guard: webhookGuard, log });
    webhooks.start();
    const worker = webhooks;
    // Every replica runs one too: jobs are claimed row by row, and a target's key is unique.
    evaluations = evaluatorWorkerFor(
      {
        config,
        sql,
        clickhouse: stores.clickhouse.client,
        writer,
        scoreWriter,
        ingest: app.traceIngest,
        guard: webhookGuard,
        shared: app.evaluation,
      },
      { log },
    );
    evaluations.start();
    const evaluationWorker = evaluations;
    // Every replica evaluates every monitor: a state moves by a conditional update, so a
    // monitor fires (and resolves) once per episode however many replicas run.
    const evaluator = createMonitorEvaluator({ sql, metrics: monitorMetricReader(stores.clickhouse.client), enqueue: enqueueEvent, log });
    monitors = createMonitorScheduler(evaluator, config.LOUPE_MONITOR_INTERVAL_MS, log);
    monitors.start();
    const monitorScheduler = monitors;
    log.info(
      {
        url,
        otlpGrpcPort: grpc?.port,
        embeddedPostgres: stores.postgres.embedded,
        embeddedClickhouse: stores.clickhouse.embedded,
        connections: { total: bounds.total, perAddress: bounds.perAddress, openFileLimit: bounds.openFileLimit },
        startupMs: Date.now() - started,
      },
      'loupe is listening',
    );
    const server = app;
    const ingest = writer;
    const scoreIngest = scoreWriter;
    const otlpGrpc = grpc;
    return {
      app: server,
      url,
      grpcPort: otlpGrpc?.port,
      stop: async () => {
        // Both listeners stop accepting and wait for their requests in flight.
        await Promise.all([server.close(), otlpGrpc?.stop()]);
        await closeWriter(ingest, log); // applies what the log holds; what it cannot stays for the next start
        await monitorScheduler.stop(); // waits for an evaluation round in flight
        await worker.stop(); // waits for deliveries in flight; the undelivered stay in the outbox
        await evaluationWorker.stop(); // waits for jobs in flight; the rest stay pending
        await closeWriter(scoreIngest, log); // after every source of scores (HTTP, gRPC, evaluators) stopped
        await stores.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => {});
    await grpc?.stop(0).catch(() => {});
    if (writer) await closeWriter(writer, log).catch(() => {});
    await monitors?.stop().catch(() => {});
    await webhooks?.stop().catch(() => {});
    await evaluations?.stop().catch(() => {});
    if (scoreWriter) await closeWriter(scoreWriter, log).catch(() => {});
    await stores.close().catch(() => {});
    throw error;
  }
}

/**
 * Raises the OS priority of the calling thread, the one that answers requests, to
 * LOUPE_REQUEST_NICE (decision 081): under a saturating ingest, a read then waits less for the
 * CPU behind the engine's merges and flushes. Called once the stores are open, since threads
 * and processes started afterwards inherit it (the embedded PostgreSQL and the engine's own
 * threads must not). Where the OS refuses (no CAP_SYS_NICE) the thread stays as it was.
 */
export function raiseRequestPriority(config: Config, log: Logger): void {
  if (config.LOUPE_REQUEST_NICE === 0) return;
  try {
    setPriority(config.LOUPE_REQUEST_NICE);
  } catch (error) {
    log.info(
      { nice: config.LOUPE_REQUEST_NICE, code: (error as { code?: string }).code },
      'the request thread keeps its OS priority: raising it needs CAP_SYS_NICE (LOUPE_REQUEST_NICE=0 skips this)',
    );
  }
}

/**
 * The ingest writer: with `LOUPE_INGEST_ACK=log` (the default) over the write-ahead log, whose
 * writes left by an earlier process (a crash, or a store that was down at shutdown) are applied
 * again first; with `store`, answering once the trace store holds each write.
 */
export function openWriter(config: Config, clickhouse: ClickHouseClient, log: Logger): WriteBatcher {
  return openLoggedWriter(config, log, ingestLogDir(config), 'ingest', (options) => new WriteBatcher(clickhouse, options));
}

/**
 * The score writer, as the ingest writer over a log of its own in the `scores` folder of the
 * ingest log's (docs/decisions/109-score-ingest-through-the-write-path.md).
 */
export function openScoreWriter(config: Config, clickhouse: ClickHouseClient, log: Logger): ScoreWriter {
  return openLoggedWriter(config, log, path.join(ingestLogDir(config), 'scores'), 'score', (options) =>
    newScoreWriter(clickhouse, options),
  );
}

const ingestLogDir = (config: Config) => config.LOUPE_INGEST_LOG_DIR ?? path.join(config.LOUPE_DATA_DIR, 'ingest-log');

function openLoggedWriter<Row, Pending extends { workspace_id: string }>(
  config: Config,
  log: Logger,
  dir: string,
  what: 'ingest' | 'score',
  make: (options: {
    log?: IngestLog<Row>;
    onRefused?: WriteBatcherOptions['onRefused'];
    onTrouble?: WriteBatcherOptions['onTrouble'];
  }) => WriteBatcher<Row, Pending>,
): WriteBatcher<Row, Pending> {
  if (config.LOUPE_INGEST_ACK === 'store') return make({});
  let opened: { log: IngestLog<Row>; recovered: Recovered<Row> };
  try {
    opened = IngestLog.open<Row>(dir);
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new Error(`Cannot open the ${what} log in ${dir} (${code}): set LOUPE_INGEST_LOG_DIR to a writable folder on local disk`, {
      cause: error,
    });
  }
  const { log: ingestLog, recovered } = opened;
  const store = what === 'ingest' ? 'trace store' : 'score store';
  const writer = make({
    log: ingestLog,
    onRefused: (refused) => log.error(refused, `the ${store} refused a logged ${what} write; it is kept aside, not applied`),
    // Once when the disk fills, once when it has room again: not a line per refused request.
    onTrouble: ({ began, reason, error, ms }) =>
      began
        ? log.error({ err: error, dir }, `${reason}: ${what} answers 503 until there is room`)
        : log.warn({ dir, ms }, `${reason.replace(/^disk full: /, '')}: resolved, the disk has room again`),
  });
  if (recovered.writes.length + recovered.damagedLines > 0) {
    log.warn(
      {
        dir,
        writes: recovered.writes.length,
        rows: recovered.writes.reduce((n, w) => n + w.rows.length, 0),
        damagedLines: recovered.damagedLines,
      },
      `applying the ${what} writes an earlier process left in its log`,
    );
  }
  writer.replay(recovered.writes);
  return writer;
}

async function closeWriter(writer: { close(): Promise<boolean>; log?: { dir: string } | undefined }, log: Logger): Promise<void> {
  if (!(await writer.close())) log.warn({ dir: writer.log?.dir }, 'ingest writes not yet applied stay in the log for the next start');
}
