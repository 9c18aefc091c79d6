import type { Config } from '../config.js';
import { openClickhouseSession, type ClickHouseClient, type ClickhouseStore } from '../stores/clickhouse.js';

/**
 * The client callers' queries run on. Its current database is `<database>_sandbox`, created
 * empty and kept empty: a bare table name in a query then resolves to one of the endpoint's
 * views (CTEs over the parameterized views of clickhouse/0008) or to nothing, never to a table
 * of the service. Opened on the first SQL request, closed with the app.
 *
 * Embedded, it is a pool of `LOUPE_SQL_MAX_RUNNING` engine sessions, one statement each at a
 * time, and a session whose statement failed is closed (src/stores/statement-sessions.ts): the
 * engine would otherwise hand the failed statement's partial output to the next statement,
 * which may be another organization's.
 */
export class SqlSession {
  #store: Promise<ClickhouseStore> | undefined;
  /** Settings this engine needs for correct answers (engineSettings), set when the session opens. */
  #engineSettings = '';

  constructor(
    private readonly config: Config,
    private readonly main: ClickHouseClient,
  ) {}

  get database(): string {
    return this.config.CLICKHOUSE_DATABASE;
  }

  get sandbox(): string {
    return `${this.config.CLICKHOUSE_DATABASE}_sandbox`;
  }

  /** `, name = value…` to append to the statement's SETTINGS; '' when none. */
  get engineSettings(): string {
    return this.#engineSettings;
  }

  client(): Promise<ClickHouseClient> {
    this.#store ??= this.#open().catch((error: unknown) => {
      this.#store = undefined;
      throw error;
    });
    return this.#store.then((store) => store.client);
  }

  async #open(): Promise<ClickhouseStore> {
    // The name comes from the configuration, checked there to be a plain identifier.
    await this.main.command({ query: `CREATE DATABASE IF NOT EXISTS ${this.sandbox}` });
    this.#engineSettings = await engineSettings(this.main);
    return openClickhouseSession(
      {
        url: this.config.CLICKHOUSE_URL,
        user: this.config.CLICKHOUSE_USER,
        password: this.config.CLICKHOUSE_PASSWORD,
        database: this.config.CLICKHOUSE_DATABASE,
        dataDir: this.config.LOUPE_DATA_DIR,
      },
      this.sandbox,
      { sessions: this.config.LOUPE_SQL_MAX_RUNNING },
    );
  }

  /**
   * Stops the statement whose SETTINGS carry `log_comment = tag` (its client went away), on the
   * service's own client: the engine stops it between blocks, and its session is then closed.
   */
  async cancel(tag: string): Promise<void> {
    await this.main.command({
      query: "KILL QUERY WHERE Settings['log_comment'] = {tag:String} ASYNC",
      query_params: { tag },
    });
  }

  async close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    if (store) await (await store.catch(() => undefined))?.close();
  }
}

/**
 * Lazy materialization (engines from 25.4 on) reads the columns of an `ORDER BY … LIMIT`
 * after sorting; over the views (FINAL inside a parameterized view, behind a CTE) it loses
 * them ("Not found column … __global_row_index"). Off where the engine has it; an older
 * server has neither the setting nor the fault.
 */
async function engineSettings(client: ClickHouseClient): Promise<string> {
  const rs = await client.query({
    query: "SELECT name FROM system.settings WHERE name IN ('query_plan_optimize_lazy_materialization')",
    format: 'JSONEachRow',
  });
  return (await rs.json<{ name: string }>()).map(({ name }) => `, ${name} = 0`).join('');
}
