import { compileJsonSchema, type JsonProblem } from '../../contract/rules/json-schema.js';

/** A prompt version's output schema: checked when a version is written, and put to work by the evaluators' check. */

/**
 * Checks that an output schema is a JSON Schema its dialect's meta-schema accepts (draft-07
 * unless `$schema` names 2019-09 or 2020-12) and that it compiles (its `$ref`s resolve).
 */
export function checkOutputSchema(schema: Record<string, unknown>): JsonProblem[] {
  const compiled = compileJsonSchema(schema);
  return 'problems' in compiled ? compiled.problems : [];
}

/** The problems of `value` against an output schema (none when it is valid), for the checks that put the schema to work. */
export function validateAgainstOutputSchema(schema: Record<string, unknown>, value: unknown): JsonProblem[] {
  const compiled = compileJsonSchema(schema);
  return 'problems' in compiled ? compiled.problems : compiled.check(value);
}
