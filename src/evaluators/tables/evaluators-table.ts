import type { Sql } from '../../stores/postgres.js';
import type { CreateEvaluator, Evaluator, EvaluatorDefinition } from '../api/schemas.js';

/** The SQL on `evaluators` (postgres/0011). */

interface EvaluatorRow {
  id: string;
  workspaceId: string;
  name: string;
  type: Evaluator['type'];
  version: number;
  status: Evaluator['status'];
  definition: EvaluatorDefinition;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredEvaluator extends Evaluator {
  workspaceId: string;
}

const toEvaluator = (row: EvaluatorRow): StoredEvaluator => ({
  id: row.id,
  workspaceId: row.workspaceId,
  name: row.name,
  type: row.type,
  version: row.version,
  status: row.status,
  ...row.definition,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const columns = (sql: Sql) => sql`
  id, workspace_id as "workspaceId", name, kind as type, version, status, definition, created_at as "createdAt", updated_at as "updatedAt"`;

const definitionOf = (body: CreateEvaluator): EvaluatorDefinition => ({
  score: body.score,
  target: body.target,
  ...(body.judge && { judge: body.judge }),
  ...(body.check && { check: body.check }),
});

const isCode = (error: unknown, code: string) => (error as { code?: string }).code === code;

/** The new evaluator, or 'conflict' when the name is taken. */
export async function insertEvaluator(sql: Sql, workspaceId: string, body: CreateEvaluator): Promise<StoredEvaluator | 'conflict'> {
  const [row] = await sql<EvaluatorRow[]>`
    insert into evaluators (workspace_id, name, kind, definition, connection_id)
    values (${workspaceId}, ${body.name}, ${body.type}, ${sql.json(definitionOf(body))}, ${body.judge?.connectionId ?? null})
    on conflict (workspace_id, name) do nothing
    returning ${columns(sql)}`;
  return row ? toEvaluator(row) : 'conflict';
}

export async function selectEvaluators(sql: Sql, workspaceId: string): Promise<StoredEvaluator[]> {
  const rows = await sql<EvaluatorRow[]>`select ${columns(sql)} from evaluators where workspace_id = ${workspaceId} order by name`;
  return rows.map(toEvaluator);
}

export async function selectEvaluator(sql: Sql, workspaceId: string, id: string): Promise<StoredEvaluator | undefined> {
  const [row] = await sql<EvaluatorRow[]>`select ${columns(sql)} from evaluators where workspace_id = ${workspaceId} and id = ${id}`;
  return row && toEvaluator(row);
}

/** Every active evaluator of every workspace: what the scheduler looks for targets of. */
export async function selectActiveEvaluators(sql: Sql): Promise<StoredEvaluator[]> {
  const rows = await sql<EvaluatorRow[]>`select ${columns(sql)} from evaluators where status = 'active' order by created_at`;
  return rows.map(toEvaluator);
}

/** Replaces the definition and bumps the version (a new version may score a target again). */
export async function replaceEvaluator(
  sql: Sql,
  workspaceId: string,
  id: string,
  body: CreateEvaluator,
): Promise<StoredEvaluator | undefined | 'conflict'> {
  try {
    const [row] = await sql<EvaluatorRow[]>`
      update evaluators set name = ${body.name}, kind = ${body.type}, definition = ${sql.json(definitionOf(body))},
        connection_id = ${body.judge?.connectionId ?? null}, version = version + 1, updated_at = now()
      where workspace_id = ${workspaceId} and id = ${id}
      returning ${columns(sql)}`;
    return row && toEvaluator(row);
  } catch (error) {
    if (isCode(error, '23505')) return 'conflict';
    throw error;
  }
}

export async function setEvaluatorStatus(
  sql: Sql,
  workspaceId: string,
  id: string,
  status: Evaluator['status'],
): Promise<StoredEvaluator | undefined> {
  const [row] = await sql<EvaluatorRow[]>`
    update evaluators set status = ${status}, updated_at = now() where workspace_id = ${workspaceId} and id = ${id} returning ${columns(sql)}`;
  return row && toEvaluator(row);
}

export async function deleteEvaluator(sql: Sql, workspaceId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from evaluators where workspace_id = ${workspaceId} and id = ${id} returning id`;
  return rows.length > 0;
}

/**
 * Where the evaluator's next scan for targets starts: the record time of run items
 * (`scanned_from`), the trace summary version of traces and spans (`scanned_version`, postgres/0016).
 */
export async function selectScanMarks(sql: Sql, id: string): Promise<{ scannedFrom: Date; scannedVersion: string } | undefined> {
  const [row] = await sql<{ scannedFrom: Date; scannedVersion: string }[]>`
    select scanned_from as "scannedFrom", scanned_version::text as "scannedVersion" from evaluators where id = ${id}`;
  return row;
}

/** Moves the scan's start forward only: two workers scanning at once never move it back. */
export async function advanceScannedFrom(sql: Sql, id: string, to: Date): Promise<void> {
  await sql`update evaluators set scanned_from = greatest(scanned_from, ${to}) where id = ${id}`;
}

/** Moves the scan's summary version forward only, as `advanceScannedFrom`. */
export async function advanceScannedVersion(sql: Sql, id: string, to: bigint): Promise<void> {
  await sql`update evaluators set scanned_version = greatest(scanned_version, ${to.toString()}::bigint) where id = ${id}`;
}
