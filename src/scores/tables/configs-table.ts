import type { Sql } from '../../stores/postgres.js';
import type { CreateScoreConfig, ScoreConfig, UpdateScoreConfig } from '../api/config-schemas.js';

/** The SQL on `score_configs` (postgres/0009): one workspace's configs, by id and by name. */

interface ConfigRow {
  id: string;
  name: string;
  dataType: ScoreConfig['dataType'];
  min: number | null;
  max: number | null;
  categories: ScoreConfig['categories'];
  description: string | null;
  higherIsBetter: boolean;
  archived: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const toConfig = (row: ConfigRow): ScoreConfig => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const columns = (sql: Sql) => sql`
  id, name, data_type as "dataType", min_value as "min", max_value as "max", categories, description,
  higher_is_better as "higherIsBetter", archived, created_at as "createdAt", updated_at as "updatedAt"`;

/** The new config, or undefined when the workspace has one of that name. */
export async function insertScoreConfig(sql: Sql, workspaceId: string, body: CreateScoreConfig): Promise<ScoreConfig | undefined> {
  const [row] = await sql<ConfigRow[]>`
    insert into score_configs (workspace_id, name, data_type, min_value, max_value, categories, description, higher_is_better, archived)
    values (${workspaceId}, ${body.name}, ${body.dataType}, ${body.min ?? null}, ${body.max ?? null},
      ${body.categories ? sql.json(body.categories) : null}, ${body.description ?? null}, ${body.higherIsBetter ?? true}, ${body.archived ?? false})
    on conflict (workspace_id, name) do nothing
    returning ${columns(sql)}`;
  return row && toConfig(row);
}

export async function selectScoreConfigs(sql: Sql, workspaceId: string, includeArchived: boolean): Promise<ScoreConfig[]> {
  const rows = await sql<ConfigRow[]>`
    select ${columns(sql)} from score_configs
    where workspace_id = ${workspaceId} ${includeArchived ? sql`` : sql`and not archived`}
    order by name`;
  return rows.map(toConfig);
}

export async function selectScoreConfig(sql: Sql, workspaceId: string, id: string): Promise<ScoreConfig | undefined> {
  const [row] = await sql<ConfigRow[]>`select ${columns(sql)} from score_configs where workspace_id = ${workspaceId} and id = ${id}`;
  return row && toConfig(row);
}

/** The configs of these names (archived too: they still validate). */
export async function selectScoreConfigsByName(sql: Sql, workspaceId: string, names: string[]): Promise<Map<string, ScoreConfig>> {
  if (names.length === 0) return new Map();
  const rows = await sql<ConfigRow[]>`
    select ${columns(sql)} from score_configs where workspace_id = ${workspaceId} and name = any(${names})`;
  return new Map(rows.map((row) => [row.name, toConfig(row)]));
}

/** Writes the merged fields; the caller has checked them together (config-rules.ts). */
export async function updateScoreConfig(
  sql: Sql,
  workspaceId: string,
  id: string,
  merged: Required<{ [K in keyof UpdateScoreConfig]: Exclude<UpdateScoreConfig[K], undefined> }>,
): Promise<ScoreConfig | undefined> {
  const [row] = await sql<ConfigRow[]>`
    update score_configs set min_value = ${merged.min}, max_value = ${merged.max},
      categories = ${merged.categories ? sql.json(merged.categories) : null}, description = ${merged.description},
      higher_is_better = ${merged.higherIsBetter}, archived = ${merged.archived}, updated_at = now()
    where workspace_id = ${workspaceId} and id = ${id}
    returning ${columns(sql)}`;
  return row && toConfig(row);
}

export async function deleteScoreConfig(sql: Sql, workspaceId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from score_configs where workspace_id = ${workspaceId} and id = ${id} returning id`;
  return rows.length > 0;
}
