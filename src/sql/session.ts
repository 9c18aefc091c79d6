import type { Config } from '../config.js';
import { openClickhouseSession, type ClickHouseClient, type ClickhouseStore } from '../stores/clickhouse.js';

/**
 * The client callers' queries run on. Its current database is `<database>_sandbox`, created
 * empty and kept empty: a bare table name in a query then resolves to one of the endpoint's
 * views (CTEs over the parameterized views of clickhouse/0008) or to nothing, never to a table
 * of the service. Opened on the first SQL request, closed with the app.
 */
export class SqlSession {
  #store: Promise<ClickhouseStore> | undefined;

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
    return openClickhouseSession(
      {
        url: this.config.CLICKHOUSE_URL,
        user: this.config.CLICKHOUSE_USER,
        password: this.config.CLICKHOUSE_PASSWORD,
        database: this.config.CLICKHOUSE_DATABASE,
        dataDir: this.config.LOUPE_DATA_DIR,
      },
      this.sandbox,
    );
  }

  async close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    if (store) await (await store.catch(() => undefined))?.close();
  }
}
