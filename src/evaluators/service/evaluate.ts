import { createHash } from 'node:crypto';
import type { EvaluationTarget } from '../../contract/evaluation-targets.js';
import type { EvaluationPrompts } from '../../contract/evaluation-prompts.js';
import { renderTemplate } from '../../contract/index.js';
import type { TargetGuard } from '../../egress/target-guard.js';
import type { Judge } from '../api/schemas.js';
import { runCheck } from '../model/checks.js';
import { judgeAnswerSchema, parseJudgeAnswer } from '../model/judge-answer.js';
import { readTargetField } from '../model/target-fields.js';
import type { StoredEvaluator } from '../tables/evaluators-table.js';
import { openConnection, type ConnectionDeps } from './connections.js';
import { answerOf, callModel } from './model-call.js';

/** What evaluating one target gave: a score, or a failure a retry may cure (`transient`) or not. */
export type EvaluationOutcome = { ok: true; value: number | boolean; comment: string } | { ok: false; transient: boolean; error: string };

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

export interface EvaluateDeps {
  connections: ConnectionDeps;
  prompts: EvaluationPrompts;
  guard: TargetGuard;
  timeoutMs: number;
}

/** Runs the evaluator's check or judge on one target. */
export async function evaluateTarget(deps: EvaluateDeps, evaluator: StoredEvaluator, target: EvaluationTarget): Promise<EvaluationOutcome> {
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
  return judgeTarget(deps, evaluator, evaluator.judge!, target);
}

async function judgeTarget(
  deps: EvaluateDeps,
  evaluator: StoredEvaluator,
  judge: Judge,
  target: EvaluationTarget,
): Promise<EvaluationOutcome> {
  const prompt = await deps.prompts.resolve(evaluator.workspaceId, judge.prompt);
  if (!prompt) return { ok: false, transient: false, error: 'the judge prompt version is gone' };
  const variables = Object.fromEntries(
    Object.entries(judge.variables).map(([name, field]) => [name, readTargetField(target, field) ?? '']),
  );
  const system = renderTemplate(prompt.systemPrompt, variables).text;
  const user = prompt.humanPrompt === null ? 'Give your verdict.' : renderTemplate(prompt.humanPrompt, variables).text;
  const { connection, apiKey } = await openConnection(deps.connections, evaluator.workspaceId, judge.connectionId);
  const outcome = await callModel(
    connection,
    apiKey,
    { system, user, model: judge.model ?? connection.defaultModel, answerSchema: judgeAnswerSchema(evaluator.score.dataType) },
    { guard: deps.guard, timeoutMs: deps.timeoutMs },
  );
  if (!outcome.ok) return outcome;
  const answer = parseJudgeAnswer(answerOf(connection, outcome.body, true), evaluator.score.dataType);
  if (typeof answer === 'string') return { ok: false, transient: false, error: answer };
  return { ok: true, value: answer.value, comment: answer.reasoning };
}
