import { createHash, randomBytes } from 'node:crypto';
import type { EvaluationTarget } from '../../contract/evaluation-targets.js';
import type { EvaluationPrompts } from '../../contract/evaluation-prompts.js';
import { renderTemplate } from '../../contract/index.js';
import type { TargetGuard } from '../../egress/target-guard.js';
import type { Judge, ModelConnection } from '../api/schemas.js';
import { runCheck } from '../model/checks.js';
import { judgeAnswerSchema, parseJudgeAnswer } from '../model/judge-answer.js';
import { readTargetField } from '../model/target-fields.js';
import type { StoredEvaluator } from '../tables/evaluators-table.js';
import { openConnection, type ConnectionDeps } from './connections.js';
import { answerOf, callModel, usageOf } from './model-call.js';
import type { ConnectionRateLimiter } from './rate-limiter.js';
import type { JudgeCall, RecordJudgeTrace } from '../../contract/judge-traces.js';

/**
 * What evaluating one target gave: a score, a failure a retry may cure (`transient`) or not, or
 * a wait (`deferMs`: the connection's rate limit is spent; no attempt is counted). A judge's
 * outcome names the trace of its call.
 */
export type EvaluationOutcome = (
  { ok: true; value: number | boolean; comment: string } | { ok: false; transient: boolean; error: string } | { ok: false; deferMs: number }
) & { judgeTraceId?: string };

/**
 * Whether the sampling rate takes a trace: a hash of evaluator and trace, so every worker
 * (and every restart) decides alike for the same pair.
 */
export function isSampled(evaluatorId: string, traceId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const head = createHash('sha256').update(`${evaluatorId}:${traceId}`).digest().readUInt32BE(0);
  return head / 0x1_0000_0000 < rate;
}

/** The value a score of this data type is given: a numeric score of a check's verdict is 1 or 0. */
export const scoreValueOf = (dataType: 'numeric' | 'boolean', value: number | boolean) =>
  dataType === 'numeric' && typeof value === 'boolean' ? Number(value) : value;

export interface EvaluateDeps {
  connections: ConnectionDeps;
  prompts: EvaluationPrompts;
  guard: TargetGuard;
  timeoutMs: number;
  /** Every judge call is traced in its workspace (source `evaluator`). */
  recordJudgeTrace: RecordJudgeTrace;
  /** The per-connection calls per minute of this process. */
  limiter: ConnectionRateLimiter;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void } | undefined;
  /** Opens a connection for a call; default `openConnection` (a worker keeps them a few seconds). */
  open?: (workspaceId: string, connectionId: string) => Promise<{ connection: ModelConnection; apiKey: string }>;
}

/** Runs the evaluator's check or judge on one target (`jobId`: the job, named on the judge's trace). */
export async function evaluateTarget(
  deps: EvaluateDeps,
  evaluator: StoredEvaluator,
  target: EvaluationTarget,
  jobId: string,
): Promise<EvaluationOutcome> {
  if (evaluator.check) {
    let outputSchema;
    if (evaluator.check.type === 'output_schema') {
      const prompt = await deps.prompts.resolve(evaluator.workspaceId, evaluator.check.prompt);
      if (!prompt) return { ok: false, transient: false, error: 'the prompt version of the output schema is gone' };
      outputSchema = {
        schema: prompt.outputSchema,
        validate: (schema: Record<string, unknown>, value: unknown) => deps.prompts.validateOutput(schema, value),
      };
    }
    const result = runCheck(evaluator.check, target, outputSchema);
    return { ok: true, ...result };
  }
  return judgeTarget(deps, evaluator, evaluator.judge!, target, jobId);
}

async function judgeTarget(
  deps: EvaluateDeps,
  evaluator: StoredEvaluator,
  judge: Judge,
  target: EvaluationTarget,
  jobId: string,
): Promise<EvaluationOutcome> {
  const prompt = await deps.prompts.resolve(evaluator.workspaceId, judge.prompt);
  if (!prompt) return { ok: false, transient: false, error: 'the judge prompt version is gone' };
  const variables = Object.fromEntries(
    Object.entries(judge.variables).map(([name, field]) => [name, readTargetField(target, field) ?? '']),
  );
  const system = renderTemplate(prompt.systemPrompt, variables).text;
  const user = prompt.humanPrompt === null ? 'Give your verdict.' : renderTemplate(prompt.humanPrompt, variables).text;
  const { connection, apiKey } = await (deps.open ?? ((w, c) => openConnection(deps.connections, w, c)))(
    evaluator.workspaceId,
    judge.connectionId,
  );
  const deferMs = await deps.limiter.take(connection.id, connection.requestsPerMinute);
  if (deferMs > 0) return { ok: false, deferMs };
  const model = judge.model ?? connection.defaultModel;
  const startTime = new Date().toISOString();
  const outcome = await callModel(
    connection,
    apiKey,
    { system, user, model, answerSchema: judgeAnswerSchema(evaluator.score.dataType) },
    { guard: deps.guard, timeoutMs: deps.timeoutMs },
  );
  const raw = outcome.ok ? answerOf(connection, outcome.body, true) : undefined;
  const judgeTraceId = await traceJudgeCall(deps, evaluator, {
    traceId: randomBytes(16).toString('hex'),
    name: evaluator.name,
    evaluatorId: evaluator.id,
    evaluatorVersion: evaluator.version,
    jobId,
    target: { traceId: target.traceId, ...(target.spanId !== undefined && { spanId: target.spanId }) },
    provider: connection.provider,
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    ...(raw !== undefined && { output: typeof raw === 'string' ? raw : JSON.stringify(raw) }),
    ...(outcome.ok ? usageOf(connection, outcome.body) : {}),
    startTime,
    endTime: new Date().toISOString(),
    ...(!outcome.ok && { error: outcome.error }),
  });
  const traced = judgeTraceId === undefined ? {} : { judgeTraceId };
  if (!outcome.ok) return { ...outcome, ...traced };
  const answer = parseJudgeAnswer(raw, evaluator.score.dataType);
  if (typeof answer === 'string') return { ok: false, transient: false, error: answer, ...traced };
  return { ok: true, value: answer.value, comment: answer.reasoning, ...traced };
}

/**
 * Records the call's trace; a failure to record it is logged and the judgement stands (the
 * judge was paid for: calling it again would cost twice). Answers the trace's id when stored.
 */
async function traceJudgeCall(deps: EvaluateDeps, evaluator: StoredEvaluator, call: JudgeCall): Promise<string | undefined> {
  try {
    await deps.recordJudgeTrace(evaluator.workspaceId, call);
    return call.traceId;
  } catch (error) {
    deps.log?.error({ err: error, evaluatorId: evaluator.id, jobId: call.jobId }, "the judge call's trace was not stored");
    return undefined;
  }
}
