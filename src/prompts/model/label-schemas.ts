import { z } from 'zod';
import { labelName, promptIdParams, readableLabel, versionString } from './schemas.js';

export const labelParams = promptIdParams.extend({ label: labelName });

export const resolveQuery = z
  .object({
    name: z.string().trim().min(1).max(200),
    label: readableLabel.optional().meta({ description: 'A label; "latest" names the latest version' }),
    version: versionString.optional(),
  })
  .strict()
  .refine((q) => q.label === undefined || q.version === undefined, { message: 'give label or version, not both', path: ['version'] });
export type ResolveQuery = z.infer<typeof resolveQuery>;

export const labelHistoryQuery = z.object({ label: labelName.optional() }).strict();

/** The credential that moved a label: an API key (with its user for user-scoped keys) or an OAuth user. */
export const movedBySchema = z.object({ apiKeyId: z.string().nullable(), userId: z.string().nullable() });
export type MovedBy = z.infer<typeof movedBySchema>;

const versionRef = z.object({ promptId: z.number().int(), version: z.string() });

export const labelMoveSchema = z.object({
  label: z.string(),
  from: versionRef.nullable().meta({ description: 'The version that held the label before; null when it was newly set' }),
  to: versionRef.nullable().meta({ description: 'The version that holds it after; null when it was removed' }),
  movedAt: z.string(),
  movedBy: movedBySchema,
});
export type LabelMove = z.infer<typeof labelMoveSchema>;

export const labelHoldingSchema = z.object({
  label: z.string(),
  promptId: z.number().int(),
  version: z.string(),
  heldFrom: z.string(),
  heldUntil: z.string().nullable().meta({ description: 'null while the version still holds the label' }),
  setBy: movedBySchema,
  endedBy: movedBySchema.nullable(),
});

export const labelHistorySchema = z.object({
  name: z.string(),
  promptGroupId: z.string().uuid(),
  moves: z.array(labelMoveSchema).meta({ description: 'Every move, oldest first' }),
  holdings: z.array(labelHoldingSchema).meta({ description: 'Which version held which label from when to when, oldest first' }),
});
export type LabelHistory = z.infer<typeof labelHistorySchema>;
