import { z } from 'zod';
import { boundedJson, jsonObject, jsonProblem, noNulMessage, noNulPattern } from '../../http/wire/json-bounds.js';
import { checkOutputSchema } from './output-schema.js';
import { parseVersion } from './version.js';

/** Large enough for long system prompts, small enough that one record stays a reasonable row. */
const MAX_TEXT = 1_000_000;
const MAX_ID = 2_147_483_647;
/** 0 to 2147483647 as a pattern, so the document states the integer range of ids and versions exactly. */
const upToMaxInt =
  '(?:0|[1-9][0-9]{0,8}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])';

/** PostgreSQL text holds no NUL character: refused with its path instead of failing the write. */
const text = z.string().max(MAX_TEXT).regex(noNulPattern, noNulMessage);
const name = z.string().trim().min(1).max(200).regex(noNulPattern, noNulMessage);
const description = z.string().max(10_000).regex(noNulPattern, noNulMessage);

export const versionString = z
  .string()
  .max(64)
  .superRefine((value, ctx) => {
    const check = parseVersion(value);
    if (!check.ok) ctx.addIssue({ code: 'custom', message: check.reason });
  })
  .meta({
    description: 'Strict major.minor.patch (no "v" prefix, prerelease or build metadata), each part at most 2147483647',
    example: '1.2.0',
    pattern: `^${upToMaxInt}\\.${upToMaxInt}\\.${upToMaxInt}$`,
  });

/** A JSON Schema object, checked against its dialect's meta-schema; problems name their path inside it. */
const outputSchema = boundedJson(jsonObject(), { noNul: true }).superRefine((schema, ctx) => {
  // Too deep or holding NUL: already reported, and the JSON Schema compiler recurses.
  if (jsonProblem(schema, { noNul: true })) return;
  for (const problem of checkOutputSchema(schema)) {
    ctx.addIssue({ code: 'custom', path: problem.path, message: `is not a valid JSON Schema: ${problem.message}` });
  }
});

const metadata = boundedJson(jsonObject(), { noNul: true });

export const promptSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  version: z.string(),
  promptGroupId: z.string().uuid(),
  isLatest: z.boolean(),
  labels: z.array(z.string()).meta({ description: 'Labels on this version, "latest" first when it is the latest' }),
  systemPrompt: z.string(),
  humanPrompt: z.string().nullable(),
  rawPrompt: z.string().nullable(),
  description: z.string(),
  metadata: jsonObject(),
  outputSchema: jsonObject().nullable(),
  workspaceId: z.string().uuid(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Prompt = z.infer<typeof promptSchema>;

/** Every key not listed is refused with its own path, so the client learns which field is wrong. */
const refused = (message: string) => z.custom<never>(() => false, { error: message });
const notEditable = refused('is not an editable field');

/** The content fields of a version: what a new version may change. */
const contentFields = {
  systemPrompt: text.optional(),
  humanPrompt: text.nullable().optional(),
  rawPrompt: text.nullable().optional(),
  description: description.optional(),
  metadata: metadata.optional(),
  outputSchema: outputSchema.nullable().optional(),
};

export const createPromptBody = z
  .object({
    name,
    version: versionString.default('1.0.0'),
    systemPrompt: text,
    humanPrompt: text.nullable().optional(),
    rawPrompt: text.nullable().optional(),
    description: description.default(''),
    metadata: metadata.default({}),
    outputSchema: outputSchema.nullable().optional(),
  })
  .catchall(refused('is not a field of a new prompt'));
export type CreatePrompt = z.infer<typeof createPromptBody>;

export const versionChanges = z.object({ ...contentFields, isLatest: z.boolean().optional() }).catchall(notEditable);
export type VersionChanges = z.infer<typeof versionChanges>;

export const labelPattern = /^[a-z0-9_.-]{1,64}$/;
const labelPatternMessage = 'must be 1 to 64 characters of a-z, 0-9, "_", "." or "-"';

/** A label name; `latest` is the isLatest flag and can only be read, never moved by hand. */
export const labelName = z
  .string()
  .regex(labelPattern, labelPatternMessage)
  .refine((v) => v !== 'latest', '"latest" is reserved: it is the isLatest flag of the versions')
  // "." and ".." would be read as path segments by URL resolution (PUT …/labels/.. hits another route).
  .refine((v) => v !== '.' && v !== '..', 'must not be "." or ".."')
  .meta({ example: 'production' });

/** A label to read by: any label name, "latest" included. */
export const readableLabel = z.string().regex(labelPattern, labelPatternMessage);

export const createVersionBody = z
  .object({
    newVersion: versionString,
    changes: versionChanges,
    labels: z.array(labelName).max(50).optional().meta({ description: 'Labels moved to the new version as it is created' }),
  })
  .strict();
export type CreateVersion = z.infer<typeof createVersionBody>;

/** PATCH: the content to change; the version number is derived, and the new version becomes latest. */
export const updatePromptBody = z
  .object({ ...contentFields, bump: z.enum(['patch', 'minor', 'major']).default('patch') })
  .catchall(notEditable);
export type UpdatePrompt = z.infer<typeof updatePromptBody>;

const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export const listPromptsQuery = z
  .object({
    name: name.optional(),
    isLatest: booleanQuery.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();
export type ListPromptsQuery = z.infer<typeof listPromptsQuery>;

export const promptIdParams = z.object({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,9}$/, 'must be a positive integer')
    .transform(Number)
    .refine((n) => n <= MAX_ID, `must be at most ${MAX_ID}`)
    .meta({ description: `A prompt record id: an integer from 1 to ${MAX_ID}`, pattern: `^(?!0)${upToMaxInt}$` }),
});

export const renderBody = z
  .object({
    variables: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an identifier'), z.union([z.string(), z.number(), z.boolean()]))
      .default({}),
  })
  .strict();
export type RenderBody = z.infer<typeof renderBody>;

export const renderedPromptSchema = z.object({
  promptId: z.number().int(),
  version: z.string(),
  systemPrompt: z.string(),
  humanPrompt: z.string().nullable(),
  missing: z.array(z.string()),
  unused: z.array(z.string()),
});

export const deletedPromptSchema = z.object({
  promptGroupId: z.string().uuid(),
  name: z.string(),
  deletedVersions: z.number().int(),
});
