import type { Sql } from '../../stores/postgres.js';
import type { TargetGuard } from '../../egress/target-guard.js';
import { AppError, notFound } from '../../http/wire/errors.js';
import type { CreateModelConnection, ModelConnection, UpdateModelConnection } from '../api/schemas.js';
import { keyTail, type SecretBox } from '../model/secret-box.js';
import * as table from '../tables/connections-table.js';
import { answerOf, callModel } from './model-call.js';

export interface ConnectionDeps {
  sql: Sql;
  /** Guards base URLs when stored and when called (the webhooks' guard and switch). */
  guard: TargetGuard;
  /** Absent when LOUPE_ENCRYPTION_KEY is unset: no key can be stored or opened. */
  box: SecretBox | undefined;
  /** Bound on one provider call. */
  timeoutMs: number;
}

const noEncryptionKey = () =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    'Model connections need LOUPE_ENCRYPTION_KEY (64 hexadecimal characters) set on the service to encrypt API keys',
    {
      setting: 'LOUPE_ENCRYPTION_KEY',
    },
  );

function checkBaseUrl(guard: TargetGuard, baseUrl: string) {
  const problem = guard.problemWith(baseUrl);
  if (problem) throw new AppError('VALIDATION_ERROR', `baseUrl ${problem}`, { issues: [{ path: 'baseUrl', message: problem }] });
}

const nameTaken = (name: string | undefined) =>
  new AppError('CONFLICT', `A model connection named ${name} exists in this workspace`, { name });

export async function createConnection(deps: ConnectionDeps, workspaceId: string, body: CreateModelConnection): Promise<ModelConnection> {
  if (!deps.box) throw noEncryptionKey();
  checkBaseUrl(deps.guard, body.baseUrl);
  const created = await table.insertConnection(deps.sql, workspaceId, {
    name: body.name,
    provider: body.provider,
    baseUrl: body.baseUrl,
    sealedKey: deps.box.seal(body.apiKey),
    keyTail: keyTail(body.apiKey),
    defaultModel: body.defaultModel,
    parameters: body.parameters,
    requestsPerMinute: body.requestsPerMinute,
  });
  if (!created) throw nameTaken(body.name);
  return created;
}

export const listConnections = (deps: ConnectionDeps, workspaceId: string) => table.selectConnections(deps.sql, workspaceId);

export async function getConnection(deps: ConnectionDeps, workspaceId: string, id: string): Promise<ModelConnection> {
  const found = await table.selectConnection(deps.sql, workspaceId, id);
  if (!found) throw notFound('Model connection', { id });
  return found;
}

export async function updateConnection(
  deps: ConnectionDeps,
  workspaceId: string,
  id: string,
  body: UpdateModelConnection,
): Promise<ModelConnection> {
  if (body.baseUrl !== undefined) checkBaseUrl(deps.guard, body.baseUrl);
  if (body.apiKey !== undefined && !deps.box) throw noEncryptionKey();
  const updated = await table.updateConnection(deps.sql, workspaceId, id, {
    name: body.name,
    provider: body.provider,
    baseUrl: body.baseUrl,
    defaultModel: body.defaultModel,
    parameters: body.parameters,
    requestsPerMinute: body.requestsPerMinute,
    ...(body.apiKey !== undefined && { sealedKey: deps.box!.seal(body.apiKey), keyTail: keyTail(body.apiKey) }),
  });
  if (updated === 'conflict') throw nameTaken(body.name);
  if (!updated) throw notFound('Model connection', { id });
  return updated;
}

export async function deleteConnection(deps: ConnectionDeps, workspaceId: string, id: string) {
  const deleted = await table.deleteConnection(deps.sql, workspaceId, id);
  if (deleted === 'in_use') throw new AppError('CONFLICT', 'An evaluator uses this model connection: delete or change it first', { id });
  if (!deleted) throw notFound('Model connection', { id });
  return { id, deleted: true as const };
}

/** The connection and its opened key, for a call. */
export async function openConnection(
  deps: ConnectionDeps,
  workspaceId: string,
  id: string,
): Promise<{ connection: ModelConnection; apiKey: string }> {
  const connection = await getConnection(deps, workspaceId, id);
  if (!deps.box) throw noEncryptionKey();
  const sealed = await table.selectSealedKey(deps.sql, workspaceId, id);
  return { connection, apiKey: deps.box.open(sealed!) };
}

/** One small call with the connection's default model: the answer's text or the provider's error. */
export async function testConnection(deps: ConnectionDeps, workspaceId: string, id: string) {
  const { connection, apiKey } = await openConnection(deps, workspaceId, id);
  const outcome = await callModel(
    connection,
    apiKey,
    { system: 'You are a connection test.', user: 'Reply with the word OK.', model: connection.defaultModel, maxTokens: 16 },
    { guard: deps.guard, timeoutMs: deps.timeoutMs },
  );
  if (!outcome.ok) return { ok: false, answer: null, error: outcome.error, statusCode: outcome.statusCode };
  const answer = answerOf(connection, outcome.body, false);
  return typeof answer === 'string'
    ? { ok: true, answer: answer.slice(0, 500), error: null, statusCode: outcome.statusCode }
    : { ok: false, answer: null, error: 'the provider answered without a message', statusCode: outcome.statusCode };
}
