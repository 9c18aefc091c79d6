import { z } from 'zod';
import { promptIdParams } from './schemas.js';

export const diffQuery = z
  .object({ against: promptIdParams.shape.id.meta({ description: 'The version to compare with (the "before" side)' }) })
  .strict();

const hunkSchema = z.object({
  oldStart: z.number().int(),
  oldLines: z.number().int(),
  newStart: z.number().int(),
  newLines: z.number().int(),
  lines: z.array(z.string()).meta({ description: 'Lines prefixed " " (context), "-" (removed) or "+" (added)' }),
});

export const textDiffSchema = z.object({ changed: z.boolean(), hunks: z.array(hunkSchema) });
export type TextDiff = z.infer<typeof textDiffSchema>;

export const jsonChangeSchema = z.object({
  added: z.array(z.object({ path: z.string(), value: z.unknown() })),
  removed: z.array(z.object({ path: z.string(), value: z.unknown() })),
  changed: z.array(z.object({ path: z.string(), from: z.unknown(), to: z.unknown() })),
});
export type JsonChange = z.infer<typeof jsonChangeSchema>;

const versionSummary = z.object({
  id: z.number().int(),
  version: z.string(),
  isLatest: z.boolean(),
  labels: z.array(z.string()),
  createdAt: z.string(),
});

export const promptDiffSchema = z.object({
  name: z.string(),
  from: versionSummary.meta({ description: 'The version given as `against`' }),
  to: versionSummary.meta({ description: 'The version :id' }),
  systemPrompt: textDiffSchema,
  humanPrompt: textDiffSchema,
  rawPrompt: textDiffSchema,
  outputSchema: jsonChangeSchema.meta({ description: 'JSON paths (RFC 9535 normalized) added, removed and changed' }),
  metadata: jsonChangeSchema,
  variables: z.object({
    from: z.array(z.string()),
    to: z.array(z.string()),
    added: z.array(z.string()),
    removed: z.array(z.string()),
  }),
});
export type PromptDiff = z.infer<typeof promptDiffSchema>;
