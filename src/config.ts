import { z } from 'zod';

/** Empty strings count as unset, so `FOO= npm start` behaves like no FOO at all. */
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const optionalUrl = (protocols: string[]) =>
  optionalString.refine(
    (v) => {
      if (v === undefined) return true;
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL (${protocols.join(' or ')})` },
  );

const optionalInt = (min: number, max: number) =>
  optionalString.pipe(
    z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(max)).optional(),
  );

export const planSchema = z.enum(['free', 'pro', 'enterprise']);
export type Plan = z.infer<typeof planSchema>;

export const configSchema = z.object({
  PORT: optionalInt(0, 65535).transform((v) => v ?? 3000),
  HOST: optionalString.transform((v) => v ?? '127.0.0.1'),
  /** OTLP/gRPC (trace and logs Export) on this port of HOST, beside the HTTP listener; 0 serves none. */
  LOUPE_OTLP_GRPC_PORT: optionalInt(0, 65535).transform((v) => v ?? 4317),
  LOUPE_DATA_DIR: optionalString.transform((v) => v ?? './data'),
  DATABASE_URL: optionalUrl(['postgres:', 'postgresql:']),
  CLICKHOUSE_URL: optionalUrl(['http:', 'https:']),
  CLICKHOUSE_USER: optionalString,
  CLICKHOUSE_PASSWORD: optionalString,
  CLICKHOUSE_DATABASE: optionalString
    .refine((v) => v === undefined || /^[A-Za-z_][A-Za-z0-9_]*$/.test(v), {
      message: 'must be a plain identifier (letters, digits, underscore)',
    })
    .transform((v) => v ?? 'loupe'),
  CLICKHOUSE_CLUSTER: optionalString.refine((v) => v === undefined || /^[A-Za-z_][A-Za-z0-9_]*$/.test(v), {
    message: 'must be a plain identifier (letters, digits, underscore)',
  }),
  LOUPE_RETENTION_DAYS: optionalInt(1, 36500),
  LOUPE_ADMIN_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: 'must be at least 16 characters',
  }),
  LOUPE_BOOTSTRAP_API_KEY: optionalString.refine((v) => v === undefined || /^[A-Za-z0-9_-]{20,200}$/.test(v), {
    message: 'must be 20 to 200 characters of letters, digits, _ or -',
  }),
  LOUPE_BOOTSTRAP_PLAN: optionalString.pipe(planSchema.optional()).transform((v) => v ?? 'pro'),
  LOUPE_BODY_LIMIT: optionalInt(1024, 1024 * 1024 * 1024).transform((v) => v ?? 10 * 1024 * 1024),
  /**
   * Bounds on open client connections (src/http/server/connection-bounds.ts, decision 090): in total
   * (unset: the process's open-file limit less a reserve for the stores) and per client address
   * (unset: a quarter of the total, at most 1,024, and off behind LOUPE_TRUST_PROXY; 0: off).
   */
  LOUPE_MAX_CONNECTIONS: optionalInt(1, 100_000_000),
  LOUPE_MAX_CONNECTIONS_PER_IP: optionalInt(0, 100_000_000),
  /** Time a client has to send a request's headers, and the whole request (headers and body), in ms; past it: 408 and close. */
  LOUPE_HEADERS_TIMEOUT_MS: optionalInt(1000, 3_600_000).transform((v) => v ?? 30_000),
  LOUPE_REQUEST_TIMEOUT_MS: optionalInt(1000, 3_600_000).transform((v) => v ?? 120_000),
  /**
   * The slowest a request body may arrive: at least LOUPE_BODY_MIN_RATE bytes a second over every
   * window of LOUPE_BODY_RATE_WINDOW_MS while it is incomplete, else 408 and close (0: no floor).
   */
  LOUPE_BODY_MIN_RATE: optionalInt(0, 1024 ** 3).transform((v) => v ?? 1024),
  LOUPE_BODY_RATE_WINDOW_MS: optionalInt(100, 600_000).transform((v) => v ?? 10_000),
  /**
   * Per-statement limits of the trace reads (lists, sessions, users, stats): memory in bytes and
   * time in milliseconds; a read that hits one answers 422 QUERY_TOO_EXPENSIVE. And the longest
   * time window a windowed read accepts, in days.
   */
  LOUPE_QUERY_MAX_MEMORY_BYTES: optionalInt(1, 2 ** 50).transform((v) => v ?? 2 * 1024 ** 3),
  LOUPE_QUERY_MAX_EXECUTION_MS: optionalInt(1, 3_600_000).transform((v) => v ?? 15_000),
  LOUPE_QUERY_MAX_WINDOW_DAYS: optionalInt(1, 36500).transform((v) => v ?? 92),
  LOUPE_OAUTH_JWKS_URL: optionalUrl(['http:', 'https:']),
  LOUPE_OAUTH_ISSUER: optionalString,
  LOUPE_OAUTH_AUDIENCE: optionalString,
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (the failed-login limit
   * counts per address): `true` (any), a hop count, or comma-separated addresses / CIDRs.
   */
  LOUPE_TRUST_PROXY: optionalString
    .transform((v): boolean | number | string => {
      if (v === undefined || v === 'false') return false;
      if (v === 'true') return true;
      if (/^\d+$/.test(v)) return Number(v);
      return v;
    })
    .refine((v) => typeof v !== 'string' || v.split(',').every((p) => /^[0-9a-fA-F:./]+$/.test(p.trim())), {
      message: 'must be true, false, a hop count, or comma-separated addresses or CIDRs',
    }),
  /**
   * Whether ingest prices generation spans that sent no cost (src/traces/cost/). Off, spans keep
   * only the cost they sent; the ingest benchmark compares both.
   */
  LOUPE_COST_AT_INGEST: optionalString.pipe(z.enum(['true', 'false']).optional()).transform((v) => v !== 'false'),
  /**
   * When an ingest is answered (src/traces/writer/write-batcher.ts): `log` once it is in the local
   * write-ahead log on disk, applied to the trace store in large flushes right after; `store`
   * once the trace store holds it. Either way an answered ingest is readable at once through
   * this replica; through another replica, `log` makes it readable once applied (well under a
   * second unless the store is down).
   */
  LOUPE_INGEST_ACK: optionalString.pipe(z.enum(['log', 'store']).optional()).transform((v) => v ?? 'log'),
  /**
   * The OS priority (nice value, -20 to 0) of the thread that answers requests and, in the
   * embedded engine, of the statements of reads: below 0 they go before the engine's merges,
   * the ingest writer's flushes (at 19) and other programs. Needs CAP_SYS_NICE (root, or a
   * container granted it); without it the start says so and both stay at 0. 0 leaves them.
   */
  LOUPE_REQUEST_NICE: optionalString
    .pipe(
      z
        .string()
        .regex(/^-?\d+$/, 'must be a whole number from -20 to 0')
        .transform(Number)
        .pipe(z.number().int().min(-20).max(0))
        .optional(),
    )
    .transform((v) => v ?? -10),
  /** The write-ahead log's folder; default `<LOUPE_DATA_DIR>/ingest-log`. It must be on local disk and kept across restarts. */
  LOUPE_INGEST_LOG_DIR: optionalString,
  /**
   * How long a replica reuses an API key it authenticated before reading it again; changes reach
   * every replica at once through LISTEN (src/tenancy/service/credential-cache.ts). 0: read PostgreSQL on
   * every request (behind a pooler that cannot LISTEN).
   */
  LOUPE_CREDENTIAL_CACHE_MS: optionalInt(0, 3_600_000).transform((v) => v ?? 10_000),
  /** How long a replica reuses a workspace's prices before reading them again (a change made through this replica applies at once). */
  LOUPE_PRICE_CACHE_MS: optionalInt(0, 3_600_000).transform((v) => v ?? 15_000),
  /**
   * Limits of one POST /api/sql query (src/sql/): time, memory, rows and bytes read, rows and
   * bytes answered; past any of them the query stops and answers 422 QUERY_TOO_EXPENSIVE.
   */
  LOUPE_SQL_MAX_EXECUTION_MS: optionalInt(1, 3_600_000).transform((v) => v ?? 10_000),
  LOUPE_SQL_MAX_MEMORY_BYTES: optionalInt(1024, 2 ** 50).transform((v) => v ?? 1024 ** 3),
  LOUPE_SQL_MAX_ROWS_TO_READ: optionalInt(1, 2 ** 50).transform((v) => v ?? 100_000_000),
  LOUPE_SQL_MAX_BYTES_TO_READ: optionalInt(1, 2 ** 50).transform((v) => v ?? 10 * 1024 ** 3),
  LOUPE_SQL_MAX_RESULT_ROWS: optionalInt(1, 2 ** 40).transform((v) => v ?? 100_000),
  LOUPE_SQL_MAX_RESULT_BYTES: optionalInt(1, 2 ** 50).transform((v) => v ?? 100 * 1024 ** 2),
  /** SQL queries one organization may run at once on one instance; more wait their turn (LOUPE_SQL_MAX_WAIT_MS). */
  LOUPE_SQL_MAX_CONCURRENT: optionalInt(1, 1000).transform((v) => v ?? 2),
  /** SQL queries of all organizations running at once on one instance (embedded: engine sessions). */
  LOUPE_SQL_MAX_RUNNING: optionalInt(1, 1000).transform((v) => v ?? 4),
  /** Longest wait of a SQL query for its turn before it answers 429 with Retry-After. */
  LOUPE_SQL_MAX_WAIT_MS: optionalInt(0, 600_000).transform((v) => v ?? 5_000),
  /** `npx loupe sql` and `npx loupe mcp`: the service to ask and the key to ask with. */
  LOUPE_URL: optionalUrl(['http:', 'https:']).transform((v) => v ?? 'http://127.0.0.1:3000'),
  LOUPE_API_KEY: optionalString,
  /** `npx loupe mcp` with an organization- or user-scoped key: the workspace (and for a user key, the organization) to read. */
  LOUPE_WORKSPACE_ID: optionalString.pipe(z.uuid('must be a UUID').optional()),
  LOUPE_ORGANIZATION_ID: optionalString.pipe(z.uuid('must be a UUID').optional()),
  /** Lets webhooks reach loopback, private and link-local addresses (tests, self-hosted receivers). */
  /** How often the service evaluates every monitor (src/monitors/); 0: never. */
  LOUPE_MONITOR_INTERVAL_MS: optionalInt(0, 86_400_000).transform((v) => v ?? 60_000),
  LOUPE_WEBHOOK_ALLOW_PRIVATE: optionalString.pipe(z.enum(['true', 'false']).optional()).transform((v) => v === 'true'),
  /**
   * The key that seals secrets stored for a workspace (model connections' API keys,
   * src/evaluators/model/secret-box.ts): 32 bytes as 64 hexadecimal characters. Unset, no
   * secret can be stored and creating a model connection answers 503 naming this variable.
   */
  LOUPE_ENCRYPTION_KEY: optionalString.refine((v) => v === undefined || /^[0-9a-fA-F]{64}$/.test(v), {
    message: 'must be 64 hexadecimal characters (32 bytes)',
  }),
  LOG_LEVEL: optionalString
    .pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional())
    .transform((v) => v ?? 'info'),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; every other module takes the typed result. */
export function loadConfig(env: NodeJS.ProcessEnv | Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`));
  }
  return parsed.data;
}
