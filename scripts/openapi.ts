/**
 * Prints the API's OpenAPI document (the one `GET /openapi.json` answers) without stores or a
 * listening socket: routes only describe themselves when registered, so placeholders stand in
 * for the databases. The console's client types are generated from this output.
 */
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Sql } from '../src/stores/postgres.js';
import type { ClickHouseClient } from '../src/stores/clickhouse.js';

const unavailable = new Proxy(
  {},
  {
    get() {
      throw new Error('no store is open while the OpenAPI document is generated');
    },
  },
);

// An admin token so the admin routes are registered and described too.
const config = loadConfig({ LOG_LEVEL: 'silent', LOUPE_ADMIN_TOKEN: 'openapi-generation-only-token' });
const app = await buildApp({ config, sql: unavailable as Sql, clickhouse: unavailable as ClickHouseClient, consoleDir: false });
await app.ready();
const document = JSON.stringify(app.swagger(), null, 2);
await app.close();
const out = process.argv[2];
if (out) writeFileSync(out, `${document}\n`);
else process.stdout.write(`${document}\n`);
