import { z } from 'zod';
import { jsonProblem } from '../http/wire/json-bounds.js';

/** Wire shapes of POST /api/sql. */

/** Longer queries are refused before the engine parses them (its own cap is 256 KiB with the wrapper). */
export const maxQueryLength = 100_000;

/** `{name:Type}` placeholders; names with two leading underscores are the service's own. */
const parameterName = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'must be a letter then up to 63 letters, digits or _');

/** Integers a JSON number holds exactly; a larger one (a UInt64 past 2^53) is sent as a string. */
const exactNumber = z
  .number()
  .refine(
    (n) => !Number.isInteger(n) || Number.isSafeInteger(n),
    'is an integer beyond ±2^53, which a JSON number cannot hold exactly: send it as a string ("18446744073709551615")',
  );

// Named, so the OpenAPI document carries it as a component its recursive $refs resolve to.
const parameterValue: z.ZodType<unknown> = z
  .lazy(() => z.union([z.string(), exactNumber, z.boolean(), z.null(), z.array(parameterValue), z.record(z.string(), parameterValue)]))
  .meta({ id: 'SqlParameterValue' });

/** Levels of arrays and objects a parameter may nest (a Map of Arrays is 2). */
export const maxParameterDepth = 8;

/** The path of the first own `__proto__` key in a parameter (its depth is bounded before this walk). */
function protoKeyPath(value: unknown): (string | number)[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (key === '__proto__') return [key];
    const inner = protoKeyPath(item);
    if (inner) return [Array.isArray(value) ? Number(key) : key, ...inner];
  }
  return undefined;
}

/**
 * The parameters, refused before the recursive schema walks them when one nests deeper than
 * `maxParameterDepth` (the walk is json-bounds.ts's, with an explicit stack: no depth overflows it).
 */
const parameters = z.preprocess(
  (value, ctx) => {
    if (value === null || typeof value !== 'object') return value;
    for (const [name, item] of Object.entries(value)) {
      const problem = jsonProblem(item, { maxDepth: maxParameterDepth });
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem.message, path: [name, ...problem.path], input: item });
        return {};
      }
    }
    const reserved = protoKeyPath(value);
    if (reserved) {
      // The validator leaves such a key out of its output: refused rather than silently dropped.
      ctx.addIssue({ code: 'custom', message: 'is a key __proto__, which cannot be bound: use another key', path: reserved, input: value });
      return {};
    }
    return value;
  },
  z.record(parameterName, parameterValue),
);

export const sqlFormats = ['json', 'csv', 'jsonl', 'parquet'] as const;

export const sqlBodySchema = z.object({
  query: z
    .string()
    .trim()
    .min(1, 'is empty')
    .max(maxQueryLength, `is longer than ${maxQueryLength} characters`)
    .describe('One SELECT (or WITH … SELECT) over the views spans and traces; {name:Type} placeholders take `parameters`'),
  parameters: parameters
    .optional()
    .describe("Values of the query's {name:Type} placeholders, bound by the engine, never pasted into the text"),
  format: z.enum(sqlFormats).default('json').describe('json (the envelope); csv, jsonl or parquet answer the file itself, for export'),
});
export type SqlBody = z.infer<typeof sqlBodySchema>;

export const sqlColumnSchema = z.object({ name: z.string(), type: z.string() });

export const sqlStatisticsSchema = z.object({
  rowsRead: z.number(),
  bytesRead: z.number(),
  elapsedMs: z.number(),
});
export type SqlStatistics = z.infer<typeof sqlStatisticsSchema>;

export const sqlResultSchema = z.object({
  columns: z.array(sqlColumnSchema),
  /** One array per row, values in the order of `columns`, as the engine writes them in JSON. */
  rows: z.array(z.array(z.unknown())),
});
export type SqlResult = z.infer<typeof sqlResultSchema>;

export const sqlMetaSchema = { statistics: sqlStatisticsSchema, rowCount: z.number() };
