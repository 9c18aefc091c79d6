import { z } from 'zod';
import type { ClickHouseClient } from './clickhouse.js';

/**
 * A named ClickHouse read: its parameters and its rows each a zod schema, its SQL one template
 * (the table files of a feature hold them: src/traces/tables/). Calling it checks the
 * parameters, runs the statement with them bound by the engine (`{name:Type}`, never spliced
 * into the text) and parses every row, so a column renamed or retyped fails here, by the
 * query's name, instead of flowing on as a cast.
 *
 * `settings` is a statement's own `SETTINGS …` clause (query-limits.ts): the embedded engine
 * keeps a session-level setting for every later statement, so per-read limits go in the text.
 */
export interface QueryDefinition<P extends z.ZodType, R extends z.ZodType> {
  name: string;
  params: P;
  row: R;
  /** The statement and its bound values, from the checked parameters. */
  sql(params: z.output<P>): { query: string; values: Record<string, unknown> };
}

export interface Query<P extends z.ZodType, R extends z.ZodType> {
  (clickhouse: ClickHouseClient, params: z.input<P>, settings?: string): Promise<Array<z.output<R>>>;
  /** The statement the parameters make, unrun (tests read it). */
  sql(params: z.input<P>): { query: string; values: Record<string, unknown> };
}

export function defineQuery<P extends z.ZodType, R extends z.ZodType>(definition: QueryDefinition<P, R>): Query<P, R> {
  const rows = z.array(definition.row);
  const sql = (params: z.input<P>) => {
    const checked = definition.params.safeParse(params);
    if (!checked.success) throw new Error(`${definition.name}: invalid parameters: ${z.prettifyError(checked.error)}`);
    return definition.sql(checked.data);
  };
  const run = async (clickhouse: ClickHouseClient, params: z.input<P>, settings = '') => {
    const { query, values } = sql(params);
    const result = await clickhouse.query({ query: `${query}\n${settings}`, query_params: values, format: 'JSONEachRow' });
    const parsed = rows.safeParse(await result.json());
    if (!parsed.success) throw new Error(`${definition.name}: unexpected rows: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  };
  return Object.assign(run, { sql });
}
