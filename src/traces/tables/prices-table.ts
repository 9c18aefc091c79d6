import type { Sql } from '../../stores/postgres.js';
import type { CreatePriceBody, WorkspacePrice } from '../model/wire/cost-schemas.js';

/** The SQL of workspace prices (postgres/0006). Every statement is confined to one workspace. */

interface PriceRow {
  id: string;
  model: string;
  matchType: 'exact' | 'regex';
  provider: string | null;
  inputPerMillion: number;
  outputPerMillion: number;
  cacheReadPerMillion: number | null;
  cacheWritePerMillion: number | null;
  validFrom: Date | null;
  createdAt: Date;
}

const toPrice = (row: PriceRow): WorkspacePrice => ({
  ...row,
  validFrom: row.validFrom?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
});

const columns = (sql: Sql) => sql`
  id, model, match_type as "matchType", provider, input_per_million as "inputPerMillion",
  output_per_million as "outputPerMillion", cache_read_per_million as "cacheReadPerMillion",
  cache_write_per_million as "cacheWritePerMillion", valid_from as "validFrom", created_at as "createdAt"`;

export async function insertPrice(sql: Sql, workspaceId: string, body: CreatePriceBody): Promise<WorkspacePrice> {
  const [row] = await sql<PriceRow[]>`
    insert into workspace_prices (workspace_id, model, match_type, provider, input_per_million, output_per_million,
      cache_read_per_million, cache_write_per_million, valid_from)
    values (${workspaceId}, ${body.model}, ${body.matchType}, ${body.provider ?? null}, ${body.inputPerMillion},
      ${body.outputPerMillion}, ${body.cacheReadPerMillion ?? null}, ${body.cacheWritePerMillion ?? null}, ${body.validFrom ?? null})
    returning ${columns(sql)}`;
  return toPrice(row!);
}

/** The workspace's prices, oldest first. */
export async function selectPrices(sql: Sql, workspaceId: string): Promise<WorkspacePrice[]> {
  const rows = await sql<PriceRow[]>`
    select ${columns(sql)} from workspace_prices where workspace_id = ${workspaceId} order by created_at, id`;
  return rows.map(toPrice);
}

export async function deletePriceRow(sql: Sql, workspaceId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from workspace_prices where id = ${id} and workspace_id = ${workspaceId} returning id`;
  return rows.length === 1;
}
