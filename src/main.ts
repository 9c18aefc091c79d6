import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, planSchema, type Config } from './config.js';
import { createLogger, migrate, openStores, startServer } from './server.js';
import { migratePostgres, openPostgres, StartupError, type PostgresStore } from './stores/postgres.js';
import * as tenancy from './tenancy/service/tenants.js';
import { createApiKeyBody, createOrganizationBody } from './tenancy/model/schemas.js';
import { AppError } from './http/wire/errors.js';
import { runSqlCommand } from './sql/cli.js';
import { serveMcpOverStdio } from './mcp/stdio.js';

const usage = `Usage: loupe <command>

  start                                   serve the API (the default)
  migrate                                 apply PostgreSQL and ClickHouse migrations
  orgs create --name N --plan free|pro|enterprise [--per-minute N --per-day N]
  workspaces create --org ORG_ID --name N
  keys create --org ORG_ID (--workspace WS_ID | --scope organization | --user USER_ID) [--name N]
  keys list --org ORG_ID
  keys revoke KEY_ID
  sql "SELECT …" [--csv | --format jsonl] [--param name=value …] [--workspace WS_ID]
                                          query a running service (LOUPE_URL, LOUPE_API_KEY)
  mcp                                     the MCP server on stdio, reading a running service
                                          (LOUPE_URL, LOUPE_API_KEY; LOUPE_WORKSPACE_ID and
                                          LOUPE_ORGANIZATION_ID for organization or user keys)

Configuration comes from the environment (see README.md).`;

async function withPostgres<T>(config: Config, work: (store: PostgresStore) => Promise<T>): Promise<T> {
  const store = await openPostgres({ url: config.DATABASE_URL, dataDir: config.LOUPE_DATA_DIR });
  try {
    await migratePostgres(store.sql);
    return await work(store);
  } finally {
    await store.close();
  }
}

function print(value: unknown) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function required(values: Record<string, string | string[] | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new AppError('VALIDATION_ERROR', `--${name} is required`);
  return value;
}

function positiveInt(value: string | boolean | undefined): number | undefined {
  return typeof value === 'string' ? Number(value) : undefined;
}

async function runCli(argv: string[]): Promise<number> {
  const config = loadConfig(process.env);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      org: { type: 'string' },
      workspace: { type: 'string' },
      user: { type: 'string' },
      scope: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      csv: { type: 'boolean' },
      format: { type: 'string' },
      param: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command = 'start', sub] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  if (command === 'sql') {
    if (!sub) throw new AppError('VALIDATION_ERROR', 'sql needs the query: loupe sql "SELECT …"');
    const format = values.csv ? 'csv' : (values.format ?? 'table');
    if (format !== 'table' && format !== 'csv' && format !== 'jsonl')
      throw new AppError('VALIDATION_ERROR', '--format takes table, csv or jsonl');
    return runSqlCommand(
      {
        baseUrl: config.LOUPE_URL,
        apiKey: config.LOUPE_API_KEY,
        query: sub,
        format,
        parameters: values.param ?? [],
        workspaceId: values.workspace,
      },
      process.stdout,
      process.stderr,
    );
  }
  if (command === 'mcp') {
    await serveMcpOverStdio({
      baseUrl: config.LOUPE_URL,
      apiKey: config.LOUPE_API_KEY,
      workspaceId: config.LOUPE_WORKSPACE_ID,
      organizationId: config.LOUPE_ORGANIZATION_ID,
    });
    return 0;
  }
  switch (`${command}${sub ? ` ${sub}` : ''}`) {
    case 'start': {
      const log = createLogger(config);
      const server = await startServer(config, log);
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'shutting down');
        server.stop().then(
          () => process.exit(0),
          (error: unknown) => {
            log.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
      return -1; // keep running
    }
    case 'migrate': {
      const stores = await openStores(config, createLogger(config));
      try {
        print({ applied: await migrate(config, stores) });
      } finally {
        await stores.close();
      }
      return 0;
    }
    case 'orgs create': {
      const body = createOrganizationBody.parse({
        name: values.name,
        plan: planSchema.parse(values.plan),
        rateLimitPerMinute: positiveInt(values['per-minute']),
        rateLimitPerDay: positiveInt(values['per-day']),
      });
      print(await withPostgres(config, ({ sql }) => tenancy.createOrganization(sql, body)));
      return 0;
    }
    case 'workspaces create': {
      const org = required(values, 'org');
      const name = required(values, 'name');
      print(await withPostgres(config, ({ sql }) => tenancy.createWorkspace(sql, org, name)));
      return 0;
    }
    case 'keys create': {
      const scope = values.workspace ? 'workspace' : values.user ? 'user' : (values.scope ?? 'workspace');
      const body = createApiKeyBody.parse({
        scope,
        organizationId: values.org,
        workspaceId: values.workspace,
        userId: values.user,
        name: values.name,
      });
      print(await withPostgres(config, ({ sql }) => tenancy.createApiKey(sql, body)));
      return 0;
    }
    case 'keys list': {
      const org = required(values, 'org');
      print(await withPostgres(config, ({ sql }) => tenancy.listApiKeys(sql, org)));
      return 0;
    }
    case 'keys revoke': {
      const id = positionals[2] ?? (typeof values.name === 'string' ? values.name : undefined);
      if (!id) throw new AppError('VALIDATION_ERROR', 'keys revoke needs the key id');
      print(await withPostgres(config, ({ sql }) => tenancy.revokeApiKey(sql, id)));
      return 0;
    }
    default:
      process.stderr.write(`Unknown command: ${positionals.join(' ')}\n\n${usage}\n`);
      return 2;
  }
}

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof StartupError) process.stderr.write(`${error.message}\n`);
    else if (error instanceof AppError) process.stderr.write(`${error.code}: ${error.message}\n`);
    else if (error && typeof error === 'object' && 'issues' in error) {
      const issues = (error as { issues: { path: PropertyKey[]; message: string }[] }).issues;
      process.stderr.write(`Invalid arguments:\n${issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`).join('\n')}\n`);
    } else process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
