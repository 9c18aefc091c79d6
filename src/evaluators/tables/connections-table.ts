import type { Sql } from '../../stores/postgres.js';
import type { ModelConnection } from '../api/schemas.js';

/** The SQL on `model_connections` (postgres/0011). The sealed key is read only by `selectSealedKey`. */

interface ConnectionRow {
  id: string;
  name: string;
  provider: ModelConnection['provider'];
  baseUrl: string;
  apiKeyTail: string;
  defaultModel: string;
  parameters: ModelConnection['parameters'];
  requestsPerMinute: number | null;
  createdAt: Date;
  updatedAt: Date;
}

const toConnection = (row: ConnectionRow): ModelConnection => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const columns = (sql: Sql) => sql`
  id, name, provider, base_url as "baseUrl", api_key_tail as "apiKeyTail", default_model as "defaultModel", parameters,
  requests_per_minute as "requestsPerMinute", created_at as "createdAt", updated_at as "updatedAt"`;

export interface ConnectionToStore {
  name: string;
  provider: ModelConnection['provider'];
  baseUrl: string;
  sealedKey: string;
  keyTail: string;
  defaultModel: string;
  parameters: ModelConnection['parameters'];
  /** Undefined: unchanged (an update); null: no limit. */
  requestsPerMinute?: number | null | undefined;
}

/** The new connection, or undefined when the workspace has one of that name. */
export async function insertConnection(sql: Sql, workspaceId: string, c: ConnectionToStore): Promise<ModelConnection | undefined> {
  const [row] = await sql<ConnectionRow[]>`
    insert into model_connections (workspace_id, name, provider, base_url, api_key_sealed, api_key_tail, default_model, parameters,
      requests_per_minute)
    values (${workspaceId}, ${c.name}, ${c.provider}, ${c.baseUrl}, ${c.sealedKey}, ${c.keyTail}, ${c.defaultModel}, ${sql.json(c.parameters)},
      ${c.requestsPerMinute ?? null})
    on conflict (workspace_id, name) do nothing
    returning ${columns(sql)}`;
  return row && toConnection(row);
}

export async function selectConnections(sql: Sql, workspaceId: string): Promise<ModelConnection[]> {
  const rows = await sql<ConnectionRow[]>`select ${columns(sql)} from model_connections where workspace_id = ${workspaceId} order by name`;
  return rows.map(toConnection);
}

export async function selectConnection(sql: Sql, workspaceId: string, id: string): Promise<ModelConnection | undefined> {
  const [row] = await sql<
    ConnectionRow[]
  >`select ${columns(sql)} from model_connections where workspace_id = ${workspaceId} and id = ${id}`;
  return row && toConnection(row);
}

/** The sealed key of a connection, for the one call that needs it. */
export async function selectSealedKey(sql: Sql, workspaceId: string, id: string): Promise<string | undefined> {
  const [row] = await sql<
    { sealed: string }[]
  >`select api_key_sealed as sealed from model_connections where workspace_id = ${workspaceId} and id = ${id}`;
  return row?.sealed;
}

/** The changed connection; undefined when there is none; 'conflict' when the new name is taken. */
export async function updateConnection(
  sql: Sql,
  workspaceId: string,
  id: string,
  c: Partial<ConnectionToStore>,
): Promise<ModelConnection | undefined | 'conflict'> {
  try {
    const [row] = await sql<ConnectionRow[]>`
      update model_connections set
        name = coalesce(${c.name ?? null}, name),
        provider = coalesce(${c.provider ?? null}, provider),
        base_url = coalesce(${c.baseUrl ?? null}, base_url),
        api_key_sealed = coalesce(${c.sealedKey ?? null}, api_key_sealed),
        api_key_tail = coalesce(${c.keyTail ?? null}, api_key_tail),
        default_model = coalesce(${c.defaultModel ?? null}, default_model),
        parameters = coalesce(${c.parameters ? sql.json(c.parameters) : null}, parameters),
        requests_per_minute = ${c.requestsPerMinute === undefined ? sql`requests_per_minute` : c.requestsPerMinute},
        updated_at = now()
      where workspace_id = ${workspaceId} and id = ${id}
      returning ${columns(sql)}`;
    return row && toConnection(row);
  } catch (error) {
    if ((error as { code?: string }).code === '23505') return 'conflict';
    throw error;
  }
}

/** True when deleted; 'in_use' when an evaluator still uses it (the foreign key restricts). */
export async function deleteConnection(sql: Sql, workspaceId: string, id: string): Promise<boolean | 'in_use'> {
  try {
    const rows = await sql`delete from model_connections where workspace_id = ${workspaceId} and id = ${id} returning id`;
    return rows.length > 0;
  } catch (error) {
    if ((error as { code?: string }).code === '23503') return 'in_use';
    throw error;
  }
}
