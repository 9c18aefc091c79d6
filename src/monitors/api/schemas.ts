import { z } from 'zod';
import { monitorMetrics } from '../../contract/monitor-metrics.js';

const filterValue = z.string().min(1).max(200);

export const monitorFiltersSchema = z
  .object({
    environment: filterValue.optional(),
    model: filterValue.optional(),
    name: filterValue.optional().meta({ description: 'The trace name' }),
    tag: filterValue.optional().meta({ description: 'Traces carrying this tag' }),
    userId: filterValue.optional(),
  })
  .strict();

export const monitorConditionSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('threshold'),
      direction: z.enum(['above', 'below']),
      value: z.number().meta({ description: 'Fires when the window’s value is strictly above (below) this' }),
    })
    .strict(),
  z
    .object({
      kind: z.literal('change'),
      direction: z.enum(['above', 'below']),
      percent: z
        .number()
        .gt(0)
        .max(100_000)
        .meta({ description: 'Fires when the value rose (above) or fell (below) by at least this percentage against the previous window' }),
    })
    .strict(),
]);

const monitorFields = {
  name: z.string().min(1).max(200),
  metric: z.enum(monitorMetrics),
  scoreName: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'The score whose mean is watched; required with metric score_mean' }),
  windowSeconds: z
    .number()
    .int()
    .min(60)
    .max(2_592_000)
    .meta({ description: 'The window the metric is computed over, ending at evaluation time' }),
  filters: monitorFiltersSchema.default({}),
  condition: monitorConditionSchema,
  enabled: z.boolean().default(true),
};

const scoreNameRule = <T extends { metric?: string | undefined; scoreName?: string | undefined }>(body: T, ctx: z.RefinementCtx) => {
  if (body.metric === 'score_mean' && body.scoreName === undefined)
    ctx.addIssue({ code: 'custom', path: ['scoreName'], message: 'is required with metric score_mean' });
  if (body.metric !== undefined && body.metric !== 'score_mean' && body.scoreName !== undefined)
    ctx.addIssue({ code: 'custom', path: ['scoreName'], message: 'is only for metric score_mean' });
};

export const createMonitorBody = z.object(monitorFields).strict().superRefine(scoreNameRule);
export type CreateMonitor = z.infer<typeof createMonitorBody>;

/** A whole replacement of the monitor's definition; its state and history stay. */
export const updateMonitorBody = createMonitorBody;

export const monitorParams = z.object({ id: z.string().uuid() });

export const monitorSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  metric: z.enum(monitorMetrics),
  scoreName: z.string().nullable(),
  windowSeconds: z.number().int(),
  filters: monitorFiltersSchema,
  condition: monitorConditionSchema,
  enabled: z.boolean(),
  state: z
    .enum(['ok', 'firing', 'resolved'])
    .meta({ description: 'ok: never fired; firing: an episode is open; resolved: the last episode ended' }),
  episodeId: z.string().uuid().nullable().meta({ description: 'The open episode while firing' }),
  lastValue: z.number().nullable(),
  lastEvaluatedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Monitor = z.infer<typeof monitorSchema>;

export const episodeSchema = z.object({
  id: z.string().uuid(),
  firedAt: z.string(),
  firedValue: z.number().nullable(),
  resolvedAt: z.string().nullable(),
  resolvedValue: z.number().nullable(),
});
export type Episode = z.infer<typeof episodeSchema>;

export const historyQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();
