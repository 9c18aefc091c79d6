import { z } from 'zod';

const days = z.number().int().min(1).max(36500);

/** How long one workspace keeps its trace data; `null` inherits (the workspace's, then the deployment's). */
export const retentionSchema = z.object({
  workspaceId: z.string().uuid(),
  /** The deployment's default (LOUPE_RETENTION_DAYS); null keeps data forever. */
  deploymentDays: days.nullable(),
  /** The workspace's own setting; null inherits the deployment's. */
  retentionDays: days.nullable(),
  /** Per environment (the trace's `environment`); an environment not named inherits the workspace's. */
  environments: z.record(z.string().max(256), days),
  /** What applies to an environment not named: `retentionDays ?? deploymentDays` (null: forever). */
  effectiveDays: days.nullable(),
});
export type Retention = z.infer<typeof retentionSchema>;

export const setRetentionBody = z.strictObject({
  retentionDays: days.nullable(),
  /** Replaces the workspace's environment settings as a whole; absent keeps them. */
  environments: z.record(z.string().min(1).max(256), days).optional(),
});
export type SetRetention = z.infer<typeof setRetentionBody>;

export const workspaceParams = z.object({ workspaceId: z.string().uuid() });

export const applyRetentionBody = z.strictObject({ workspaceId: z.string().uuid().optional() }).optional();

export const appliedSchema = z.object({
  tables: z.array(z.string()),
  workspaceId: z.string().uuid().nullable(),
});

export const usageSchema = z.object({
  description: z.string(),
  days: z.array(z.object({ day: z.string(), traces: z.number(), spans: z.number() })),
  storage: z.object({ bytesOnDisk: z.number(), rows: z.number(), estimated: z.literal(true) }),
  oldestDataAt: z.string().nullable(),
  retention: retentionSchema,
});
export type Usage = z.infer<typeof usageSchema>;
