import type { Sql } from '../../stores/postgres.js';
import type { EvaluationPrompts } from '../../contract/evaluation-prompts.js';
import { AppError, notFound } from '../../http/wire/errors.js';
import type { CreateEvaluator, Evaluator, EvaluatorJob } from '../api/schemas.js';
import { selectConnection } from '../tables/connections-table.js';
import * as table from '../tables/evaluators-table.js';
import { selectJobs } from '../tables/jobs-table.js';
import type { TargetSources } from './targets.js';

export interface EvaluatorDeps extends TargetSources {
  sql: Sql;
  prompts: EvaluationPrompts;
}

const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path} ${message}`, { issues: [{ path, message }] });

/** What must exist for the evaluator to run: its connection, and the prompt it names. */
export async function checkReferences(deps: EvaluatorDeps, workspaceId: string, body: CreateEvaluator) {
  if (body.judge) {
    if (!(await selectConnection(deps.sql, workspaceId, body.judge.connectionId)))
      throw invalid('judge.connectionId', 'names no model connection of this workspace');
    if (!(await deps.prompts.resolve(workspaceId, body.judge.prompt)))
      throw invalid('judge.prompt', 'names no prompt version of this workspace');
  }
  if (body.check?.type === 'output_schema') {
    const prompt = await deps.prompts.resolve(workspaceId, body.check.prompt);
    if (!prompt) throw invalid('check.prompt', 'names no prompt version of this workspace');
    if (!prompt.outputSchema) throw invalid('check.prompt', 'names a prompt version without an output schema');
  }
}

const strip = ({ workspaceId: _, ...evaluator }: table.StoredEvaluator): Evaluator => evaluator;
const nameTaken = (name: string) => new AppError('CONFLICT', `An evaluator named ${name} exists in this workspace`, { name });

export async function createEvaluator(deps: EvaluatorDeps, workspaceId: string, body: CreateEvaluator): Promise<Evaluator> {
  await checkReferences(deps, workspaceId, body);
  const created = await table.insertEvaluator(deps.sql, workspaceId, body);
  if (created === 'conflict') throw nameTaken(body.name);
  return strip(created);
}

export const listEvaluators = async (deps: EvaluatorDeps, workspaceId: string) =>
  (await table.selectEvaluators(deps.sql, workspaceId)).map(strip);

export async function getEvaluator(deps: EvaluatorDeps, workspaceId: string, id: string): Promise<Evaluator> {
  const found = await table.selectEvaluator(deps.sql, workspaceId, id);
  if (!found) throw notFound('Evaluator', { id });
  return strip(found);
}

/** Replaces the definition: a new version, whose targets may be scored again. */
export async function replaceEvaluator(deps: EvaluatorDeps, workspaceId: string, id: string, body: CreateEvaluator): Promise<Evaluator> {
  await checkReferences(deps, workspaceId, body);
  const updated = await table.replaceEvaluator(deps.sql, workspaceId, id, body);
  if (updated === 'conflict') throw nameTaken(body.name);
  if (!updated) throw notFound('Evaluator', { id });
  return strip(updated);
}

export async function setStatus(deps: EvaluatorDeps, workspaceId: string, id: string, status: Evaluator['status']): Promise<Evaluator> {
  const updated = await table.setEvaluatorStatus(deps.sql, workspaceId, id, status);
  if (!updated) throw notFound('Evaluator', { id });
  return strip(updated);
}

export async function deleteEvaluator(deps: EvaluatorDeps, workspaceId: string, id: string) {
  if (!(await table.deleteEvaluator(deps.sql, workspaceId, id))) throw notFound('Evaluator', { id });
  return { id, deleted: true as const };
}

export async function listJobs(deps: EvaluatorDeps, workspaceId: string, id: string, limit: number, status?: EvaluatorJob['status']) {
  await getEvaluator(deps, workspaceId, id);
  return selectJobs(deps.sql, workspaceId, id, limit, status);
}
