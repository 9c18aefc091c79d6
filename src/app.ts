import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from './config.js';
import type { Sql } from './stores/postgres.js';
import type { ClickHouseClient } from './stores/clickhouse.js';
import { registerBodyDecoding } from './http/requests/body.js';
import { registerUnreadBodyClose } from './http/requests/unread-body.js';
import { answerClientError, registerErrorHandling, sendError } from './http/requests/error-handler.js';
import { AppError } from './http/wire/errors.js';
import { registerOpenApi } from './http/routes/openapi.js';
import { applySecurityHeaders, registerSecurityHeaders } from './http/requests/security-headers.js';
import { requestIdFor } from './http/requests/request-id.js';
import { healthRoutes } from './http/routes/health.js';
import { registerOutageGate, type Outage } from './http/requests/outage.js';
import { createAuthenticator, type BearerVerifier } from './tenancy/service/auth.js';
import { registerAuthenticatedScope, type AdmitRequest } from './tenancy/service/authenticated.js';
import type { FailedAuthLimiter } from './tenancy/service/failed-auth.js';
import { createKeyDirectory } from './tenancy/service/key-directory.js';
import { createCredentialCache, type CredentialCache } from './tenancy/service/credential-cache.js';
import { adminRoutes } from './tenancy/api/admin-routes.js';
import { retentionAdminRoutes, retentionRoutes } from './retention/routes.js';
import { traceRoutes } from './traces/api/traces-routes.js';
import { promptRoutes } from './prompts/api/routes.js';
import { promptFiguresReader } from './traces/tables/spans-table.js';
import { webhookRoutes } from './prompts/api/webhook-routes.js';
import { meRoutes } from './tenancy/api/me-routes.js';
import { otlpRoutes } from './traces/api/otlp-routes.js';
import { analyticsRoutes } from './traces/api/analytics-routes.js';
import { modelRoutes } from './traces/api/models-routes.js';
import { PriceBook } from './traces/cost/workspace-prices.js';
import { WriteBatcher, type WriteBatcherOptions } from './traces/writer/write-batcher.js';
import { ingestTraces, traceIngestOf, type TraceIngest } from './traces/ingest/ingest.js';
import { registerReadBarrier } from './traces/api/read-barrier.js';
import { sqlRoutes } from './sql/routes.js';
import { itemByQueryRoutes, sessionRoutes, userRoutes } from './traces/api/sessions-routes.js';
import { registerConsole } from './http/routes/console.js';
import { createTargetGuard, type TargetGuard } from './egress/target-guard.js';
import { mcpRoutes } from './mcp/routes.js';
import { createSelfCalls, selfCallHeader } from './http/requests/self-calls.js';
import { authorOf, scoreRoutes } from './scores/api/routes.js';
import { scoreConfigRoutes } from './scores/api/config-routes.js';
import { langfuseScoreRoutes } from './scores/api/langfuse-routes.js';
import { VersionClock } from './scores/model/version-clock.js';
import { traceScoresOf } from './scores/service/trace-scores.js';
import { promptScoresOf } from './scores/service/prompt-scores.js';
import { ingestScores } from './scores/service/ingest.js';
import { datasetRoutes } from './datasets/api/routes.js';
import { datasetRunRoutes } from './datasets/api/run-routes.js';
import { runItemsMirror } from './datasets/service/run-items-mirror.js';
import { spanContentReader } from './traces/query/span-content.js';
import { evaluationTracesOf } from './traces/query/evaluation-targets.js';
import { queryLimitsOf } from './traces/model/query-limits.js';
import { evaluationPromptsOf } from './prompts/service/evaluation-prompts.js';
import type { CheckEvaluationScore, EvaluationScore, RecordEvaluationScore } from './contract/evaluation-scores.js';
import { isIssue, resolveScoreValue } from './scores/model/score-rules.js';
import { selectScoreConfigsByName } from './scores/tables/configs-table.js';
import type { JudgeCall, RecordJudgeTrace } from './contract/judge-traces.js';
import { evaluationRunsOf } from './datasets/service/evaluation-runs.js';
import { createConnectionRateLimiter, type ConnectionRateLimiter } from './evaluators/service/rate-limiter.js';
import type { IngestActivity } from './contract/ingest-activity.js';
import { createIngestActivity } from './traces/ingest/ingest-activity.js';
import { EVALUATOR_TRACE_SOURCE } from './evaluators/service/targets.js';
import { evaluatorRoutes, modelConnectionRoutes } from './evaluators/api/routes.js';
import { evaluatorPreviewRoutes, type PreviewDeps } from './evaluators/api/preview.js';
import type { ConnectionDeps } from './evaluators/service/connections.js';
import { createSecretBox } from './evaluators/model/secret-box.js';
import { createEvaluatorWorker, type EvaluatorWorker, type EvaluatorWorkerOptions } from './evaluators/service/worker.js';
import type { ScoreStores } from './scores/service/ingest.js';
import { scoreTarget, scoreWriterBounds, type PendingScore } from './scores/service/score-writes.js';
import { createScoreConfigCache } from './scores/service/config-cache.js';
import type { LoggedScoreRow } from './scores/tables/scores-table.js';
import { groupCommit } from './stores/group-commit.js';
import { monitorRoutes } from './monitors/api/routes.js';
import { traceFiguresReader } from './traces/query/trace-figures.js';
import { runScoresOf } from './scores/service/run-scores.js';
import type { RecordOtelScores } from './traces/api/grpc/server.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Stores evaluation events as scores: the OTLP/gRPC listener's hook (server.ts). */
    recordOtelScores: RecordOtelScores;
    /** Stores traces (the writer, the pricing of ingest, its turns): the OTLP/gRPC listener's too (server.ts). */
    traceIngest: TraceIngest;
    /** What the evaluators' preview shares with the process's worker (server.ts). */
    evaluation: EvaluationShared;
  }
}

/** Credentials never reach a log line. */
export const secretLogPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-admin-token"]',
  `req.headers["${selfCallHeader}"]`,
];

export interface AppDeps {
  config: Config;
  sql: Sql;
  clickhouse: ClickHouseClient;
  /**
   * The group-commit writer of trace ingestion, made with the stores (server.ts); without it
   * the app makes its own, so two apps never share one.
   */
  writer?: WriteBatcher;
  /**
   * The writer of scores, the trace writer's machinery over the scores' table, its own log
   * beside the trace writer's (server.ts); without it the app makes its own, answering once stored.
   */
  scoreWriter?: ScoreWriter;
  /** A pino logger to use; without it one is made at LOG_LEVEL. */
  log?: FastifyBaseLogger;
  /** OAuth bearer verification; absent when OAuth is not configured. */
  verifyBearer?: BearerVerifier;
  /** Rate limiting after authentication; absent means no limits (tests of other features). */
  admit?: AdmitRequest;
  /** Failed-authentication limit per client address (API, bearer and admin credentials); absent means none. */
  failedAuth?: FailedAuthLimiter;
  /** API keys kept in memory, shared with the OTLP/gRPC listener (server.ts); without it the app makes its own. */
  keys?: CredentialCache;
  /** The guard of webhook targets; default the one `webhookTargetGuard(config)` makes. */
  webhookGuard?: TargetGuard;
  /**
   * Why PostgreSQL is known to be down now (the embedded server restarting: server.ts); while it
   * names one, API requests answer 503 at once and `/healthz` says why. Absent: never known.
   */
  postgresOutage?: () => Outage | undefined;
  /** The built web console to serve at `/`; default web/dist, `false` for none. */
  consoleDir?: string | false;
}

/** The API keys one process keeps in memory (credential-cache.ts), at the configured freshness. */
export function credentialCacheFor(sql: Sql, config: Config, log: FastifyBaseLogger): CredentialCache {
  return createCredentialCache(sql, {
    ttlMs: config.LOUPE_CREDENTIAL_CACHE_MS,
    onListenError: (error) => log.warn({ err: error }, 'cannot LISTEN for credential changes: API keys are read on every request'),
  });
}
/** Webhook targets: private addresses refused unless LOUPE_WEBHOOK_ALLOW_PRIVATE=true. */
export const webhookTargetGuard = (config: Config): TargetGuard =>
  createTargetGuard({ allowPrivate: config.LOUPE_WEBHOOK_ALLOW_PRIVATE, allowSetting: 'LOUPE_WEBHOOK_ALLOW_PRIVATE' });

/** Bound on one call to a model provider (a judge's answer, a connection test). */
const MODEL_CALL_TIMEOUT_MS = 60_000;

/** What model connections need: the guard of webhooks (same switch) and the key that seals API keys. */
export const modelConnectionDepsFor = (sql: Sql, config: Config, guard?: TargetGuard): ConnectionDeps => ({
  sql,
  guard: guard ?? webhookTargetGuard(config),
  box: config.LOUPE_ENCRYPTION_KEY ? createSecretBox(config.LOUPE_ENCRYPTION_KEY) : undefined,
  timeoutMs: MODEL_CALL_TIMEOUT_MS,
});

/**
 * Evaluators' scores go through the scores feature's ingest (source `eval`), validated like any
 * score, group-committed: the scores of one evaluator that arrive while a write is in flight go
 * together in the next (one statement for many jobs, not one each).
 */
export function evaluationScoreRecorder(stores: ScoreStores): RecordEvaluationScore {
  const record = groupCommit(async (key, scores: EvaluationScore[]) => {
    const [workspaceId, evaluatorId] = key.split('/') as [string, string];
    const writer = { workspaceId, authorId: `evaluator:${evaluatorId}`, defaultSource: 'eval' } as const;
    const result = await ingestScores(
      stores,
      writer,
      scores.map(({ firstWrite: _first, ...score }) => ({ ...score, source: 'eval' })),
      new Set(scores.flatMap((score) => (score.firstWrite ? [score.id] : []))),
    );
    return scores.map((_, index) => {
      const id = result.ids[index];
      if (id) return { id };
      // Named by the score's field, not its place in the batch: the preview words it alike.
      const errors = result.errors.filter((e) => e.index === index).map((e) => refusal(e.path.slice(`scores.${index}.`.length), e.message));
      return { error: errors.join('; ') || 'refused' };
    });
  });
  return (workspaceId, evaluatorId, score) => record(`${workspaceId}/${evaluatorId}`, score);
}

const refusal = (field: string, message: string) => `${field} ${message}`;

/** The preview's check of a score against its config, by the scores feature's own rule (as its ingest checks the worker's). */
export const evaluationScoreChecker =
  (sql: Sql): CheckEvaluationScore =>
  async (workspaceId, score) => {
    const configs = await selectScoreConfigsByName(sql, workspaceId, [score.name]);
    const resolved = resolveScoreValue({ ...score, source: 'eval' }, configs.get(score.name));
    if (isIssue(resolved)) return { error: refusal(resolved.field, resolved.message) };
    return { value: resolved.value, stringValue: resolved.stringValue };
  };

/**
 * A judge call as a trace of its workspace (source `evaluator`), through the traces' ingest: one
 * generation span with the messages, the answer and the tokens, priced by the workspace's
 * prices like any span (cost/pricing.ts).
 */
export function judgeTraceRecorder(ingest: TraceIngest): RecordJudgeTrace {
  // The calls of a workspace that end while its last ones are being stored go together in the
  // next ingest (one write for many judges' traces, not one each).
  const record = groupCommit(async (workspaceId, calls: JudgeCall[]) => {
    const result = await ingestTraces(ingest, workspaceId, calls.map(judgeTraceOf));
    return calls.map((_, index) =>
      result.errors
        .filter((e) => e.index === index)
        .map((e) => `${e.path} ${e.message}`)
        .join('; '),
    );
  });
  return async (workspaceId, call) => {
    const refused = await record(workspaceId, call);
    if (refused !== '') throw new Error(`the judge's trace was refused: ${refused}`);
  };
}

const judgeTraceOf = (call: JudgeCall) => ({
  traceId: call.traceId,
  name: call.name,
  source: EVALUATOR_TRACE_SOURCE,
  spans: [
    {
      spanId: call.traceId.slice(0, 16),
      name: 'judge',
      kind: 'llm.chat',
      model: call.model,
      provider: call.provider,
      input: { messages: call.messages },
      ...(call.output !== undefined && { output: { text: call.output } }),
      ...(call.inputTokens !== undefined && { inputTokens: call.inputTokens }),
      ...(call.outputTokens !== undefined && { outputTokens: call.outputTokens }),
      startTime: call.startTime,
      endTime: call.endTime,
      durationMs: Math.max(0, Date.parse(call.endTime) - Date.parse(call.startTime)),
      status: call.error === undefined ? 'ok' : 'error',
      ...(call.error !== undefined && { statusMessage: call.error.slice(0, 1000) }),
      metadata: {
        evaluatorId: call.evaluatorId,
        evaluatorVersion: call.evaluatorVersion,
        jobId: call.jobId,
        targetTraceId: call.target.traceId,
        ...(call.target.spanId !== undefined && { targetSpanId: call.target.spanId }),
      },
    },
  ],
});

/**
 * One of each per process, made by the app and handed to its preview and to the worker beside
 * it (server.ts): the count of each model connection's calls (kept in PostgreSQL for every instance; a preview counts against the
 * worker's limit), and the rate of external ingest, which the worker yields to.
 */
export interface EvaluationShared {
  limiter: ConnectionRateLimiter;
  ingestActivity: IngestActivity;
}

export const evaluationSharedOf = (sql: Sql): EvaluationShared => ({
  limiter: createConnectionRateLimiter(sql),
  ingestActivity: createIngestActivity(),
});

interface EvaluationStores {
  config: Config;
  sql: Sql;
  clickhouse: ClickHouseClient;
  writer: WriteBatcher;
  /** The app's score writer; without it, one of the worker's own that answers once stored. */
  scoreWriter?: ScoreWriter;
  ingest?: TraceIngest;
  guard?: TargetGuard;
  /** The app's (`app.evaluation`); without it, a worker of its own that never yields. */
  shared?: EvaluationShared;
}

/** What evaluating a target needs over this service's stores: the worker's and the preview's. */
export function evaluationDepsFor(deps: EvaluationStores): PreviewDeps {
  const connections = modelConnectionDepsFor(deps.sql, deps.config, deps.guard);
  // The judges' own traces are not external ingest: stored through a copy that notes nothing.
  const { activity: _external, ...judgeIngest } = deps.ingest ?? traceIngestOf(deps.writer);
  return {
    sql: deps.sql,
    connections,
    guard: connections.guard,
    timeoutMs: MODEL_CALL_TIMEOUT_MS,
    prompts: evaluationPromptsOf(deps.sql),
    traces: evaluationTracesOf(deps.clickhouse, queryLimitsOf(deps.config)),
    runs: evaluationRunsOf(deps.sql),
    // The app's ingest prices the judge's span by the workspace's prices; without it, the built-in table.
    recordJudgeTrace: judgeTraceRecorder(judgeIngest),
    checkScore: evaluationScoreChecker(deps.sql),
    limiter: deps.shared?.limiter ?? createConnectionRateLimiter(deps.sql),
  };
}

/** The evaluators' worker of `evaluatorWorkerFor`, with the writer its scores go through. */
export interface ServiceEvaluatorWorker extends EvaluatorWorker {
  /** The app's score writer, or without it the worker's own, which `stop` closes (a write after that makes another). */
  readonly scoreWriter: ScoreWriter;
}

/** The evaluators' worker over this service's stores: one per replica (server.ts), or made by a test. */
export function evaluatorWorkerFor(deps: EvaluationStores, options: Partial<EvaluatorWorkerOptions> = {}): ServiceEvaluatorWorker {
  // Without the app's score writer (tests, benchmarks), one of the worker's own, answering once stored.
  let own = deps.scoreWriter ? undefined : newScoreWriter(deps.clickhouse);
  const current = (): ScoreWriter => {
    if (deps.scoreWriter) return deps.scoreWriter;
    if (own!.closed) own = newScoreWriter(deps.clickhouse);
    return own!;
  };
  const worker = createEvaluatorWorker({
    ...evaluationDepsFor(deps),
    ...(deps.shared && { ingestActivity: deps.shared.ingestActivity }),
    recordScore: evaluationScoreRecorder({
      clickhouse: deps.clickhouse,
      sql: deps.sql,
      clock: new VersionClock(),
      writes: deps.scoreWriter ?? {
        write: (workspaceId, rows, traceIds) => current().write(workspaceId, rows, traceIds),
        readable: (workspaceId, traceIds) => current().readable(workspaceId, traceIds),
        unapplied: (workspaceId) => current().unapplied(workspaceId),
      },
    }),
    ...options,
  });
  return {
    ...worker,
    get scoreWriter() {
      return current();
    },
    async stop() {
      await worker.stop();
      // The app closes its own writer when it stops; the worker closes the one it made.
      await own?.close();
    },
  };
}

/** The score writer: the ingest writer's batching, log and retries over the scores' table (docs/decisions/109-score-ingest-through-the-write-path.md). */
export type ScoreWriter = WriteBatcher<LoggedScoreRow, PendingScore>;

/** A score writer over `clickhouse`; with `options.log`, answered once logged. */
export const newScoreWriter = (
  clickhouse: ClickHouseClient,
  options: Omit<WriteBatcherOptions<LoggedScoreRow, PendingScore>, 'target'> = {},
): ScoreWriter => new WriteBatcher(clickhouse, { ...scoreWriterBounds, ...options, target: scoreTarget });

/** Path parameters longer than this are refused before routing (ids are at most 128 characters). */
export const maxPathParamLength = 512;

/** Builds the whole HTTP app without listening; `main.ts` listens, tests use `inject`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.log ? { loggerInstance: deps.log } : { logger: { level: deps.config.LOG_LEVEL, redact: secretLogPaths } }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: deps.config.LOUPE_BODY_LIMIT,
    // `__proto__` and `constructor.prototype` are legal JSON keys, stored as data: JSON.parse
    // makes them own properties, and code that copies keys does so with putKey (json-bounds.ts).
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    trustProxy: deps.config.LOUPE_TRUST_PROXY as FastifyServerOptions['trustProxy'],
    // A request's headers, and the whole request, must arrive in time (408 and close past it);
    // Node looks at the open connections every second, so the bounds hold within a second.
    requestTimeout: deps.config.LOUPE_REQUEST_TIMEOUT_MS,
    http: {
      requestTimeout: deps.config.LOUPE_REQUEST_TIMEOUT_MS,
      // Node refuses a headers timeout past the request timeout, which covers the headers too.
      headersTimeout: Math.min(deps.config.LOUPE_HEADERS_TIMEOUT_MS, deps.config.LOUPE_REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: 1000,
    },
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
  registerUnreadBodyClose(app);
  registerBodyDecoding(app, deps.config.LOUPE_BODY_LIMIT, {
    minBytesPerSecond: deps.config.LOUPE_BODY_MIN_RATE,
    windowMs: deps.config.LOUPE_BODY_RATE_WINDOW_MS,
  });
  await registerOpenApi(app);

  const writer = deps.writer ?? new WriteBatcher(deps.clickhouse);
  // Scores are answered once the score writer has them (logged), and read once it applied them.
  const scoreWriter = deps.scoreWriter ?? newScoreWriter(deps.clickhouse);
  await app.register(healthRoutes, {
    sql: deps.sql,
    clickhouse: deps.clickhouse,
    outage: deps.postgresOutage,
    ingestTrouble: () => [writer.trouble(), scoreWriter.trouble()].filter(Boolean).join('; ') || undefined,
  });
  if (deps.postgresOutage) registerOutageGate(app, deps.postgresOutage);
  const retentionDeps = {
    sql: deps.sql,
    clickhouse: deps.clickhouse,
    deploymentDays: deps.config.LOUPE_RETENTION_DAYS,
    target: { cluster: deps.config.CLICKHOUSE_CLUSTER },
  };
  if (deps.config.LOUPE_ADMIN_TOKEN) {
    await app.register(adminRoutes, {
      prefix: '/api/admin',
      sql: deps.sql,
      adminToken: deps.config.LOUPE_ADMIN_TOKEN,
      failedAuth: deps.failedAuth,
      featureRoutes: [async (admin) => admin.register(retentionAdminRoutes, retentionDeps)],
    });
  }

  // Ingest (native and OTLP) prices spans with the workspace's prices, kept in memory.
  const priceBook = new PriceBook(deps.sql, deps.config.LOUPE_PRICE_CACHE_MS);
  // One rate limiter of model calls and one measure of external ingest for the process.
  const evaluationShared = evaluationSharedOf(deps.sql);
  app.decorate('evaluation', evaluationShared);
  const ingest = traceIngestOf(
    writer,
    { enabled: deps.config.LOUPE_COST_AT_INGEST, book: priceBook },
    undefined,
    evaluationShared.ingestActivity,
  );
  // OTLP/gRPC (started by server.ts beside the app) stores through the same ingest.
  app.decorate('traceIngest', ingest);
  const keys = deps.keys ?? credentialCacheFor(deps.sql, deps.config, app.log);
  // Scores: one version clock per app, so a correction always outranks the score it corrects.
  const scoreStores = {
    clickhouse: deps.clickhouse,
    sql: deps.sql,
    clock: new VersionClock(),
    writes: scoreWriter,
    // The embedded engine is written by this process alone; given the process's score writer (server.ts), through it alone.
    onlyWriter: deps.config.CLICKHOUSE_URL === undefined && deps.scoreWriter !== undefined,
    configs: createScoreConfigCache(deps.sql, {
      ttlMs: deps.config.LOUPE_CREDENTIAL_CACHE_MS,
      onListenError: (error) =>
        app.log.warn({ err: error }, 'cannot LISTEN for score config changes: configs are read on every score request'),
    }),
  };
  const traceScores = traceScoresOf(deps.clickhouse, scoreStores.clock, scoreWriter);
  // Evaluation events (OTLP span events and log records) become scores (source otel) on their
  // spans; OTLP/gRPC (started by server.ts beside the app) takes the same hook from the app.
  const recordOtelScores: RecordOtelScores = async (caller, scores) => {
    await ingestScores(scoreStores, { workspaceId: caller.workspaceId, authorId: caller.authorId, defaultSource: 'otel' }, scores);
  };
  app.decorate('recordOtelScores', recordOtelScores);
  const authenticate = createAuthenticator(deps.sql, { verifyBearer: deps.verifyBearer, keys });
  const selfCalls = createSelfCalls();
  await app.register(async (api) => {
    registerAuthenticatedScope(api, {
      authenticate,
      admit: deps.admit,
      admitted: selfCalls.isSelfCall,
      failedAuth: deps.failedAuth,
      keys: deps.failedAuth ? createKeyDirectory(deps.sql) : undefined,
    });
    registerReadBarrier(api, [writer, scoreWriter]);
    await api.register(meRoutes);
    await api.register(traceRoutes, {
      prefix: '/api/traces',
      clickhouse: deps.clickhouse,
      ingest,
      config: deps.config,
      scores: traceScores,
    });
    await api.register(analyticsRoutes, { prefix: '/api/traces', clickhouse: deps.clickhouse, config: deps.config, scores: traceScores });
    const recordScores = (request: FastifyRequest, scores: Record<string, unknown>[]) =>
      recordOtelScores({ workspaceId: request.auth.workspaceId, authorId: authorOf(request) }, scores);
    await api.register(otlpRoutes, { prefix: '/api/traces/otlp', ingest, recordScores });
    // The path Langfuse SDKs export to: a Langfuse user switches by changing the host (docs/api.md, Langfuse SDKs).
    await api.register(otlpRoutes, { prefix: '/api/public/otel', ingest, recordScores });
    await api.register(sessionRoutes, { prefix: '/api/sessions', clickhouse: deps.clickhouse, config: deps.config, scores: traceScores });
    await api.register(userRoutes, { prefix: '/api/users', clickhouse: deps.clickhouse, config: deps.config, scores: traceScores });
    await api.register(itemByQueryRoutes, { prefix: '/api', clickhouse: deps.clickhouse, config: deps.config, scores: traceScores });
    await api.register(promptRoutes, {
      prefix: '/api/prompt',
      sql: deps.sql,
      promptFigures: promptFiguresReader(deps.clickhouse),
      promptScores: promptScoresOf(deps.clickhouse, deps.sql),
    });
    await api.register(webhookRoutes, {
      prefix: '/api/webhooks',
      sql: deps.sql,
      guard: deps.webhookGuard ?? webhookTargetGuard(deps.config),
    });
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
    await api.register(retentionRoutes, { prefix: '/api', ...retentionDeps });
    const mirror = runItemsMirror(deps.sql, deps.clickhouse);
    // Run item changes the engine missed (it failed, or the service stopped first) are sent at start-up too.
    app.addHook('onReady', async () => {
      void mirror.flush().catch((error: unknown) => app.log.warn({ err: error }, 'run items not written to the SQL store yet'));
    });
    await api.register(datasetRoutes, { prefix: '/api/datasets', sql: deps.sql, spans: spanContentReader(deps.clickhouse), mirror });
    await api.register(datasetRunRoutes, {
      prefix: '/api/datasets',
      sql: deps.sql,
      mirror,
      clickhouse: deps.clickhouse,
      readers: { traces: traceFiguresReader(deps.clickhouse), scores: runScoresOf(deps.clickhouse, deps.sql) },
    });
    await api.register(modelConnectionRoutes, {
      prefix: '/api/model-connections',
      deps: modelConnectionDepsFor(deps.sql, deps.config, deps.webhookGuard),
    });
    // One set of evaluation dependencies serves the evaluators' routes and their preview.
    const evaluation = evaluationDepsFor({ ...deps, writer, ingest, guard: deps.webhookGuard, shared: evaluationShared });
    await api.register(evaluatorRoutes, { prefix: '/api/evaluators', deps: evaluation });
    await api.register(evaluatorPreviewRoutes, { prefix: '/api/evaluators', deps: evaluation });
    await api.register(monitorRoutes, { prefix: '/api/monitors', sql: deps.sql });
    await api.register(sqlRoutes, { prefix: '/api/sql', clickhouse: deps.clickhouse, config: deps.config });
    // The MCP server's tools read through this app's own routes with the caller's credential;
    // the /mcp request was counted against the rate limit, its reads are not counted again.
    await api.register(mcpRoutes, {
      prefix: '/mcp',
      inject: async (options) => await app.inject({ ...options, headers: { ...options.headers, ...selfCalls.headers } }),
    });
  });
  if (deps.consoleDir !== false) await registerConsole(app, deps.consoleDir);

  return app;
}
