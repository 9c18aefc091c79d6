import type { EvaluationTarget } from '../../contract/evaluation-targets.js';
import type { Check } from '../api/schemas.js';
import { fieldText, readTargetField } from './target-fields.js';
import { RE2 } from 're2-wasm';

/**
 * A regex check's pattern, on RE2 (re2-wasm: linear time, no backtracking), so a tenant's
 * pattern such as `(a+)+$` cannot stall the worker; throws the engine's message when the pattern
 * is not one RE2 takes (backreferences, lookarounds).
 */
export function compileCheckPattern(pattern: string, flags = ''): RE2 {
  return new RE2(pattern, `${flags.replace('u', '')}u`);
}

/** What a check gives: the score's value and a comment saying why. */
export interface CheckResult {
  value: boolean | number;
  comment: string;
}

/**
 * Runs a built-in check on a target, with no model. `outputSchema` is the output schema of the
 * prompt version an `output_schema` check names (the service reads it). Pass/fail checks give
 * booleans; `length` gives the length when no bound is set.
 */
export function runCheck(
  check: Check,
  target: EvaluationTarget,
  outputSchema?: { schema: Record<string, unknown> | null; validate: (schema: Record<string, unknown>, value: unknown) => string[] },
): CheckResult {
  switch (check.type) {
    case 'json_parse': {
      const value = readTargetField(target, check.field);
      if (typeof value !== 'string')
        return value === undefined
          ? { value: false, comment: `${check.field} is absent` }
          : { value: true, comment: `${check.field} is already JSON` };
      try {
        JSON.parse(value);
        return { value: true, comment: `${check.field} parses as JSON` };
      } catch (error) {
        return { value: false, comment: `${check.field} is not JSON: ${(error as Error).message}` };
      }
    }
    case 'regex': {
      const text = fieldText(readTargetField(target, check.field));
      const matched = compileCheckPattern(check.pattern, check.flags).test(text);
      return { value: matched, comment: `${check.field} ${matched ? 'matches' : 'does not match'} /${check.pattern}/${check.flags ?? ''}` };
    }
    case 'contains': {
      const text = fieldText(readTargetField(target, check.field));
      const found = check.caseSensitive ? text.includes(check.text) : text.toLowerCase().includes(check.text.toLowerCase());
      return { value: found, comment: `${check.field} ${found ? 'contains' : 'does not contain'} the text` };
    }
    case 'length': {
      const length = [...fieldText(readTargetField(target, check.field))].length;
      if (check.min === undefined && check.max === undefined)
        return { value: length, comment: `${check.field} is ${length} characters long` };
      const within = (check.min === undefined || length >= check.min) && (check.max === undefined || length <= check.max);
      return { value: within, comment: `${check.field} is ${length} characters long (bounds ${check.min ?? '-'}..${check.max ?? '-'})` };
    }
    case 'latency': {
      if (target.durationMs === null) return { value: false, comment: 'the trace has no duration' };
      const within = target.durationMs <= check.maxMs;
      return { value: within, comment: `took ${target.durationMs} ms (at most ${check.maxMs} ms)` };
    }
    case 'cost': {
      const cost = target.costUsd ?? 0;
      const within = cost <= check.maxUsd;
      return { value: within, comment: `cost ${cost} USD (at most ${check.maxUsd} USD)` };
    }
    case 'output_schema': {
      if (!outputSchema?.schema) return { value: false, comment: 'the prompt version has no output schema' };
      let value = readTargetField(target, check.field);
      if (typeof value === 'string') {
        try {
          value = JSON.parse(value);
        } catch {
          return { value: false, comment: `${check.field} is not JSON` };
        }
      }
      const problems = outputSchema.validate(outputSchema.schema, value);
      return problems.length === 0
        ? { value: true, comment: `${check.field} is valid against the output schema` }
        : { value: false, comment: problems.join('; ').slice(0, 2000) };
    }
  }
}
