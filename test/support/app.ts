import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, newScoreWriter, type AppDeps, type ScoreWriter } from '../../src/app.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import type { Plan } from '../../src/config.js';
import { createRateLimiter } from '../../src/tenancy/service/rate-limit.js';
import { createFailedAuthLimiter } from '../../src/tenancy/service/failed-auth.js';
import { WriteBatcher, type WriteBatcherOptions } from '../../src/traces/writer/write-batcher.js';
import { IngestLog } from '../../src/traces/writer/ingest-log.js';
import { openTestStores, type TestStores } from './stores.js';
import type { LoggedScoreRow } from '../../src/scores/tables/scores-table.js';
import type { PendingScore } from '../../src/scores/service/score-writes.js';

export interface Tenant {
  organizationId: string;
  workspaceId: string;
  key: string;
  headers: Record<string, string>;
}

export interface TestContext extends TestStores {
  app: FastifyInstance;
  /** The app's own group-commit writer of trace ingestion. */
  writer: WriteBatcher;
  /** The app's own score writer (over a log of its own when ingest is answered once logged). */
  scoreWriter: ScoreWriter;
  adminHeaders: Record<string, string>;
  /** A new organization with one workspace and a workspace-scoped key. */
  tenant(options?: { plan?: Plan }): Promise<Tenant>;
}

export interface TestContextOptions {
  env?: Record<string, string>;
  deps?: Partial<AppDeps>;
  /**
   * Per-organization limits counted in PostgreSQL, and the failed-authentication limit per
   * address, as a started server has them; off by default so other tests never hit them.
   * `now` is the clock both use.
   */
  rateLimits?: boolean | { now?: () => number; maxFailedAuth?: number };
  /**
   * When ingest is answered, as `LOUPE_INGEST_ACK` says: `log` (the service's default, over a
   * write-ahead log in a folder of this context's own) or `store`.
   */
  ingestAck?: 'log' | 'store';
  /** The writer's other options (flush sizes, intervals). */
  writer?: Omit<WriteBatcherOptions, 'log'>;
  /** The score writer's other options (flush sizes, intervals). */
  scoreWriter?: Omit<WriteBatcherOptions<LoggedScoreRow, PendingScore>, 'log' | 'target'>;
}

export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const stores = await openTestStores(options.env);
  const limits = options.rateLimits === true ? {} : options.rateLimits || undefined;
  const logDir = options.ingestAck === 'store' ? undefined : mkdtempSync(path.join(tmpdir(), 'loupe-ingest-log-'));
  const writer = new WriteBatcher(stores.writeClient, { ...options.writer, ...(logDir ? { log: IngestLog.open(logDir).log } : {}) });
  const scoreWriter = newScoreWriter(stores.writeClient, {
    ...options.scoreWriter,
    ...(logDir ? { log: IngestLog.open<LoggedScoreRow>(path.join(logDir, 'scores')).log } : {}),
  });
  const app = await buildApp({
    config: stores.config,
    sql: stores.sql,
    clickhouse: stores.clickhouse,
    writer,
    scoreWriter,
    ...(limits
      ? {
          admit: createRateLimiter(stores.sql, { now: limits.now }).admit,
          failedAuth: createFailedAuthLimiter({ now: limits.now, maxFailures: limits.maxFailedAuth }),
        }
      : {}),
    ...options.deps,
  });
  return {
    ...stores,
    app,
    writer,
    scoreWriter,
    adminHeaders: { 'x-admin-token': stores.config.LOUPE_ADMIN_TOKEN ?? '' },
    async tenant({ plan = 'pro' } = {}) {
      const organization = await tenancy.createOrganization(stores.sql, {
        name: `org-${randomBytes(4).toString('hex')}`,
        plan,
        ...(plan === 'enterprise' ? { rateLimitPerMinute: 100_000, rateLimitPerDay: 1_000_000 } : {}),
      });
      const workspace = await tenancy.createWorkspace(stores.sql, organization.id, 'main');
      const created = await tenancy.createApiKey(stores.sql, {
        scope: 'workspace',
        organizationId: organization.id,
        workspaceId: workspace.id,
      });
      return { organizationId: organization.id, workspaceId: workspace.id, key: created.key, headers: { 'x-api-key': created.key } };
    },
    close: async () => {
      await app.close();
      await writer.close();
      await scoreWriter.close();
      await stores.close();
      if (logDir) rmSync(logDir, { recursive: true, force: true });
    },
  };
}
