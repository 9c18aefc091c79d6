import type { Sql } from '../../stores/postgres.js';
import type { EvaluationPrompts } from '../../contract/evaluation-prompts.js';
import { AppError } from '../../http/wire/errors.js';
import { resolvePrompt } from './labels.js';
import { validateAgainstOutputSchema } from '../model/output-schema.js';

/** The judge prompts and output schemas the app hands to the evaluators feature (contract/evaluation-prompts.ts). */
export function evaluationPromptsOf(sql: Sql): EvaluationPrompts {
  return {
    async resolve(workspaceId, ref) {
      try {
        const prompt = await resolvePrompt(sql, workspaceId, ref);
        return {
          id: prompt.id,
          version: prompt.version,
          systemPrompt: prompt.systemPrompt,
          humanPrompt: prompt.humanPrompt,
          outputSchema: prompt.outputSchema,
        };
      } catch (error) {
        if (error instanceof AppError && error.code === 'NOT_FOUND') return undefined;
        throw error;
      }
    },
    validateOutput: (schema, value) => validateAgainstOutputSchema(schema, value).map((p) => `/${p.path.join('/')} ${p.message}`),
  };
}
