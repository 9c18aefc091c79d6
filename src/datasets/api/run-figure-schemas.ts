import { z } from 'zod';
import { runItemPageMetaSchema, runSchema } from './run-schemas.js';

/** Wire shapes of a run's figures and of the comparison of runs. */

const interval = z.object({ low: z.number(), high: z.number() }).nullable();
const dataType = z.enum(['numeric', 'categorical', 'boolean']);

export const runItemFiguresSchema = z.object({
  datasetItemId: z.string(),
  traceId: z.string(),
  spanId: z.string().nullable(),
  output: z.unknown(),
  error: z.string().nullable().meta({ description: 'The error recorded on the run item' }),
  failed: z.boolean().meta({ description: 'An error recorded on the item, or its trace failed' }),
  costUsd: z.number().nullable(),
  latencyMs: z.number().nullable(),
  scores: z
    .record(z.string(), z.number())
    .meta({ description: "Per score name, the mean of the trace's scores of it (boolean: share of true)" }),
});
export type RunItemFigures = z.infer<typeof runItemFiguresSchema>;

export const runFiguresSchema = z.object({
  items: z.number().int(),
  errors: z.number().int().meta({ description: 'Items with an error recorded or a failed trace' }),
  costUsd: z.number().nullable().meta({ description: "Total cost of the items' traces; null when none has a cost" }),
  latencyP50: z.number().nullable(),
  latencyP95: z.number().nullable(),
  scores: z.array(
    z.object({
      name: z.string(),
      dataType,
      n: z.number().int().meta({ description: 'Items scored' }),
      mean: z.number().nullable(),
      ci95: interval.meta({ description: "95% interval of the mean over items (Student's t; Wilson's for boolean); null with too few" }),
    }),
  ),
});
export type RunFigures = z.infer<typeof runFiguresSchema>;

/** A run's fields, with its figures over all its items and a page of its items. */
export const runWithFiguresSchema = runSchema.extend({ figures: runFiguresSchema, items: z.array(runItemFiguresSchema) });

export const runComparisonMetricSchema = z.object({
  kind: z.enum(['score', 'cost', 'latency']),
  name: z.string().meta({ description: 'The score name, or costUsd, latencyMs' }),
  dataType: dataType,
  higherIsBetter: z.boolean(),
  baselineRunId: z.string().meta({ description: 'The first run of `runs`' }),
  runId: z.string(),
  n: z.number().int().meta({ description: 'Items present in both runs with a value in both' }),
  baselineMean: z.number().nullable().meta({ description: 'null for a categorical score' }),
  mean: z.number().nullable(),
  difference: z.number().nullable().meta({ description: 'mean − baselineMean over the paired items' }),
  test: z
    .enum(['paired_t', 'mcnemar_exact', 'mcnemar_chi_square', 'stuart_maxwell'])
    .nullable()
    .meta({ description: 'paired t (numeric), McNemar (boolean), Stuart–Maxwell marginal homogeneity (categorical)' }),
  statistic: z.number().nullable(),
  df: z.number().nullable(),
  pValue: z.number().nullable(),
  verdict: z.enum(['better', 'worse', 'no significant difference', 'different']),
});
export type RunComparisonMetric = z.infer<typeof runComparisonMetricSchema>;

export const runComparisonSchema = z.object({
  runs: z.array(runSchema),
  metrics: z.array(runComparisonMetricSchema),
  items: z.array(
    z.object({
      datasetItemId: z.string(),
      runs: z.array(runItemFiguresSchema.nullable()).meta({ description: 'In the order of `runs`; null where the run has no such item' }),
    }),
  ),
});

/** The side by side view's page alone: the runs and a page of items, no metrics. */
export const runComparisonItemsSchema = runComparisonSchema.pick({ runs: true, items: true });

export const runFiguresQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(400).optional(),
});

export const compareRunsQuery = runFiguresQuery.extend({
  runs: z
    .string()
    .transform((text) => text.split(','))
    .pipe(z.array(z.uuid()).min(2, 'name at least two runs').max(10, 'at most 10 runs'))
    .meta({ description: 'Run ids separated by commas: the first is the baseline each other is compared with' }),
});

export { runItemPageMetaSchema };
