import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * JSON Schemas users give (a prompt version's output schema, a dataset's item schemas): a schema
 * is checked against its dialect's meta-schema when it is set, and values are checked against
 * it. One rule for every feature that holds one.
 */

export interface JsonProblem {
  /** Segments of a path: inside the schema (a bad schema) or inside the value (a value the schema refuses). */
  path: string[];
  message: string;
}

const draft07 = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);
const draft2019 = new Set(['https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2019-09/schema#']);
const draft2020 = new Set(['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#']);

/**
 * A fresh validator per schema: an instance caches compiled schemas by `$id`, and two records
 * may reuse one. Unknown keywords (`example`, vendor hints) are allowed: output schemas are
 * handed to models that read them.
 */
function ajvFor(dialect: unknown): Ajv | Ajv2019 | Ajv2020 | undefined {
  const options = { strict: false, allErrors: true } as const;
  if (dialect === undefined || (typeof dialect === 'string' && draft07.has(dialect))) return new Ajv(options);
  if (typeof dialect === 'string' && draft2019.has(dialect)) return new Ajv2019(options);
  if (typeof dialect === 'string' && draft2020.has(dialect)) return new Ajv2020(options);
  return undefined;
}

function toProblem(error: ErrorObject): JsonProblem {
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return {
    path: missing === undefined ? path : [...path, missing],
    message: (error.message ?? 'is invalid') + (allowed ? ` (${allowed.map(String).join(', ')})` : ''),
  };
}

/**
 * One problem per path: a meta-schema reports each failed branch of an anyOf (`type` must be a
 * name, or an array of names), and the first at a path reads best.
 */
function firstPerPath(problems: JsonProblem[]): JsonProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = p.path.join('/');
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

export type ValueCheck = (value: unknown) => JsonProblem[];

/**
 * The check of values against a schema, or the schema's own problems: it must be a JSON
 * Schema its dialect's meta-schema accepts (draft-07 unless `$schema` names 2019-09 or 2020-12)
 * and compile (its `$ref`s resolve).
 */
export function compileJsonSchema(schema: Record<string, unknown>): { check: ValueCheck } | { problems: JsonProblem[] } {
  const ajv = ajvFor(schema.$schema);
  if (!ajv)
    return {
      problems: [{ path: ['$schema'], message: 'must name draft-07, 2019-09 or 2020-12 of JSON Schema, or be left out (draft-07)' }],
    };
  if (!ajv.validateSchema(schema)) return { problems: firstPerPath((ajv.errors ?? []).map(toProblem)) };
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    return { problems: [{ path: [], message: `does not compile: ${(error as Error).message}` }] };
  }
  return { check: (value) => (validate(value) ? [] : firstPerPath((validate.errors ?? []).map(toProblem))) };
}
