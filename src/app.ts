import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import type { Sql } from './stores/postgres.js';
import type { ClickHouseClient } from './stores/clickhouse.js';
import { registerBodyDecoding } from './http/body.js';
import { answerClientError, registerErrorHandling, sendError } from './http/error-handler.js';
import { AppError } from './http/errors.js';
import { registerOpenApi } from './http/openapi.js';
import { applySecurityHeaders, registerSecurityHeaders } from './http/security-headers.js';
import { requestIdFor } from './http/request-id.js';
import { healthRoutes } from './http/health.js';
import { createAuthenticator, type BearerVerifier } from './tenancy/auth.js';
import { registerAuthenticatedScope, type AdmitRequest } from './tenancy/authenticated.js';
import type { FailedAuthLimiter } from './tenancy/failed-auth.js';
import { createKeyDirectory } from './tenancy/key-directory.js';
import { createCredentialCache } from './tenancy/credential-cache.js';
import { adminRoutes } from './tenancy/admin-routes.js';
import { traceRoutes } from './traces/routes.js';
import { promptRoutes } from './prompts/routes.js';
import { promptFiguresReader } from './traces/spans-table.js';
import { webhookRoutes } from './prompts/webhooks/routes.js';
import { meRoutes } from './tenancy/me.js';
import { otlpRoutes } from './traces/otlp/routes.js';
import { analyticsRoutes } from './traces/analytics/routes.js';
import { attachIngestPricing } from './traces/cost/pricing.js';
import { modelRoutes } from './traces/cost/routes.js';
import { PriceBook } from './traces/cost/workspace-prices.js';
import { WriteBatcher } from './traces/write-batcher.js';
import { registerReadBarrier } from './traces/read-barrier.js';
import { sqlRoutes } from './sql/routes.js';
import { sessionRoutes, userRoutes } from './traces/sessions/routes.js';
import { registerConsole } from './http/console.js';
import { authorOf, scoreRoutes } from './scores/api/routes.js';
import { scoreConfigRoutes } from './scores/api/config-routes.js';
import { langfuseScoreRoutes } from './scores/api/langfuse-routes.js';
import { VersionClock } from './scores/model/version-clock.js';
import { traceScoresOf } from './scores/service/trace-scores.js';
import { promptScoresOf } from './scores/service/prompt-scores.js';
import { ingestScores } from './scores/service/ingest.js';
import { datasetRoutes } from './datasets/api/routes.js';
import { datasetRunRoutes } from './datasets/api/run-routes.js';
import { spanContentReader } from './traces/span-content.js';

/** Credentials never reach a log line. */
export const secretLogPaths = ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-admin-token"]'];

export interface AppDeps {
  config: Config;
  sql: Sql;
  clickhouse: ClickHouseClient;
  /**
   * The group-commit writer of trace ingestion, made with the stores (server.ts); without it
   * the app makes its own, so two apps never share one.
   */
  writer?: WriteBatcher;
  /** A pino logger to use; without it one is made at LOG_LEVEL. */
  log?: FastifyBaseLogger;
  /** OAuth bearer verification; absent when OAuth is not configured. */
  verifyBearer?: BearerVerifier;
  /** Rate limiting after authentication; absent means no limits (tests of other features). */
  admit?: AdmitRequest;
  /** Failed-authentication limit per client address (API, bearer and admin credentials); absent means none. */
  failedAuth?: FailedAuthLimiter;
  /** The built web console to serve at `/`; default web/dist, `false` for none. */
  consoleDir?: string | false;
}

/** Path parameters longer than this are refused before routing (ids are at most 128 characters). */
export const maxPathParamLength = 512;

/** Builds the whole HTTP app without listening; `main.ts` listens, tests use `inject`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.log ? { loggerInstance: deps.log } : { logger: { level: deps.config.LOG_LEVEL, redact: secretLogPaths } }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: deps.config.LOUPE_BODY_LIMIT,
    trustProxy: deps.config.LOUPE_TRUST_PROXY as FastifyServerOptions['trustProxy'],
    // Far above the longest id any route accepts (128), so every accepted id reaches its route.
    routerOptions: { maxParamLength: maxPathParamLength },
    // Answers fastify makes before routing (a malformed URL, an over-long path parameter)
    // go out in the envelope, with the request id and the security headers.
    frameworkErrors: (error, request, reply) => {
      applySecurityHeaders(request, reply);
      const message =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? `A path parameter is longer than ${maxPathParamLength} characters`
          : 'The URL is not valid (a malformed percent-encoding)';
      void sendError(request, reply, new AppError('VALIDATION_ERROR', message, { issues: [{ path: 'params', message }] }));
    },
    // A request the HTTP parser refuses never reaches fastify: answered in the envelope on the socket.
    clientErrorHandler: answerClientError,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  registerSecurityHeaders(app);
  registerBodyDecoding(app, deps.config.LOUPE_BODY_LIMIT);
  await registerOpenApi(app);

  await app.register(healthRoutes, { sql: deps.sql, clickhouse: deps.clickhouse });
  if (deps.config.LOUPE_ADMIN_TOKEN) {
    await app.register(adminRoutes, {
      prefix: '/api/admin',
      sql: deps.sql,
      adminToken: deps.config.LOUPE_ADMIN_TOKEN,
      failedAuth: deps.failedAuth,
    });
  }

  // Ingest (native and OTLP) prices spans with the workspace's prices, kept in memory.
  const priceBook = new PriceBook(deps.sql, deps.config.LOUPE_PRICE_CACHE_MS);
  const writer = deps.writer ?? new WriteBatcher(deps.clickhouse);
  const ingestPricing = { enabled: deps.config.LOUPE_COST_AT_INGEST, book: priceBook };
  attachIngestPricing(deps.clickhouse, ingestPricing);
  attachIngestPricing(writer.clickhouse, ingestPricing);
  const keys = createCredentialCache(deps.sql, {
    ttlMs: deps.config.LOUPE_CREDENTIAL_CACHE_MS,
    onListenError: (error) => app.log.warn({ err: error }, 'cannot LISTEN for credential changes: API keys are read on every request'),
  });
  // Scores: one version clock per app, so a correction always outranks the score it corrects.
  const scoreStores = { clickhouse: deps.clickhouse, sql: deps.sql, clock: new VersionClock() };
  const traceScores = traceScoresOf(deps.clickhouse, scoreStores.clock);
  const authenticate = createAuthenticator(deps.sql, { verifyBearer: deps.verifyBearer, keys });
  await app.register(async (api) => {
    registerAuthenticatedScope(api, {
      authenticate,
      admit: deps.admit,
      failedAuth: deps.failedAuth,
      keys: deps.failedAuth ? createKeyDirectory(deps.sql) : undefined,
    });
    registerReadBarrier(api, writer);
    await api.register(meRoutes);
    await api.register(traceRoutes, {
      prefix: '/api/traces',
      clickhouse: deps.clickhouse,
      writer,
      config: deps.config,
      scores: traceScores,
    });
    await api.register(analyticsRoutes, { prefix: '/api/traces', clickhouse: deps.clickhouse, config: deps.config });
    // Evaluation events of OTLP spans become scores (source otel) on their spans.
    const recordScores = async (request: FastifyRequest, scores: Record<string, unknown>[]) => {
      await ingestScores(
        scoreStores,
        { workspaceId: request.auth.workspaceId, authorId: authorOf(request), defaultSource: 'otel' },
        scores,
      );
    };
    await api.register(otlpRoutes, { prefix: '/api/traces/otlp', writer, recordScores });
    // The path Langfuse SDKs export to: a Langfuse user switches by changing the host (docs/api.md, Langfuse SDKs).
    await api.register(otlpRoutes, { prefix: '/api/public/otel', writer, recordScores });
    await api.register(sessionRoutes, { prefix: '/api/sessions', clickhouse: deps.clickhouse, config: deps.config, scores: traceScores });
    await api.register(userRoutes, { prefix: '/api/users', clickhouse: deps.clickhouse, config: deps.config, scores: traceScores });
    await api.register(promptRoutes, {
      prefix: '/api/prompt',
      sql: deps.sql,
      promptFigures: promptFiguresReader(deps.clickhouse),
      promptScores: promptScoresOf(deps.clickhouse, deps.sql),
    });
    await api.register(webhookRoutes, { prefix: '/api/webhooks', sql: deps.sql, allowPrivate: deps.config.LOUPE_WEBHOOK_ALLOW_PRIVATE });
    await api.register(modelRoutes, {
      prefix: '/api/models',
      sql: deps.sql,
      clickhouse: deps.clickhouse,
      book: priceBook,
      config: deps.config,
    });
    await api.register(scoreRoutes, { prefix: '/api/scores', stores: scoreStores });
    await api.register(scoreConfigRoutes, { prefix: '/api/score-configs', sql: deps.sql });
    // Langfuse SDKs' and API's scores, with their Basic credentials (docs/api.md, Langfuse SDKs).
    await api.register(langfuseScoreRoutes, { prefix: '/api/public', stores: scoreStores });
    await api.register(datasetRoutes, { prefix: '/api/datasets', sql: deps.sql, spans: spanContentReader(deps.clickhouse) });
    await api.register(datasetRunRoutes, { prefix: '/api/datasets', sql: deps.sql });
    await api.register(sqlRoutes, { prefix: '/api/sql', clickhouse: deps.clickhouse, config: deps.config });
  });
  if (deps.consoleDir !== false) await registerConsole(app, deps.consoleDir);

  return app;
}
