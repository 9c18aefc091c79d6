import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

export interface SchemaProblem {
  /** Path inside the schema, as segments: `['properties', 'answer', 'type']`. */
  path: string[];
  message: string;
}

const draft07 = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);
const draft2019 = new Set(['https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2019-09/schema#']);
const draft2020 = new Set(['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#']);

/**
 * A fresh validator per check: compiled schemas are cached by `$id` inside an instance, and
 * two prompts may well reuse one `$id`. Unknown keywords (`example`, vendor hints) are
 * allowed, as output schemas are handed to models that read them.
 */
function validatorFor(dialect: unknown): Ajv | Ajv2019 | Ajv2020 | undefined {
  const options = { strict: false, allErrors: true } as const;
  if (dialect === undefined || (typeof dialect === 'string' && draft07.has(dialect))) return new Ajv(options);
  if (typeof dialect === 'string' && draft2019.has(dialect)) return new Ajv2019(options);
  if (typeof dialect === 'string' && draft2020.has(dialect)) return new Ajv2020(options);
  return undefined;
}

function toProblem(error: ErrorObject): SchemaProblem {
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  return {
    path: error.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')),
    message: (error.message ?? 'is invalid') + (allowed ? ` (${allowed.map(String).join(', ')})` : ''),
  };
}

/**
 * Checks that an output schema is a JSON Schema its dialect's meta-schema accepts (draft-07
 * unless `$schema` names 2019-09 or 2020-12) and that it compiles (its `$ref`s resolve).
 */
export function checkOutputSchema(schema: Record<string, unknown>): SchemaProblem[] {
  const ajv = validatorFor(schema.$schema);
  if (!ajv) {
    return [{ path: ['$schema'], message: 'must name draft-07, 2019-09 or 2020-12 of JSON Schema, or be left out (draft-07)' }];
  }
  if (!ajv.validateSchema(schema)) {
    // A meta-schema reports each failed branch of an anyOf (`type` must be a name, or an
    // array of names); the first problem at a path is the one that reads best.
    const seen = new Set<string>();
    return (ajv.errors ?? []).map(toProblem).filter((p) => {
      const key = p.path.join('/');
      return seen.has(key) ? false : (seen.add(key), true);
    });
  }
  try {
    ajv.compile(schema);
    return [];
  } catch (error) {
    return [{ path: [], message: `does not compile: ${(error as Error).message}` }];
  }
}

/** The problems of `value` against an output schema (none when it is valid), for the checks that put the schema to work. */
export function validateAgainstOutputSchema(schema: Record<string, unknown>, value: unknown): SchemaProblem[] {
  const ajv = validatorFor(schema.$schema);
  if (!ajv) return [{ path: ['$schema'], message: 'names an unknown JSON Schema dialect' }];
  const validate = ajv.compile(schema);
  return validate(value) ? [] : (validate.errors ?? []).map(toProblem);
}
