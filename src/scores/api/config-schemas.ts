import { z } from 'zod';
import { scoreDataTypes, scoreNameSchema } from './schemas.js';

/** Wire shapes of score configs: what a score of a name may be, and the console's annotation controls. */

const categorySchema = z.object({ label: z.string().min(1).max(200), value: z.number().finite() });

const configFields = {
  name: scoreNameSchema,
  dataType: z.enum(scoreDataTypes),
  min: z.number().finite().nullable().optional().meta({ description: 'Numeric only: the lowest value allowed' }),
  max: z.number().finite().nullable().optional().meta({ description: 'Numeric only: the highest value allowed' }),
  categories: z.array(categorySchema).min(1).max(100).nullable().optional().meta({ description: 'Categorical only: label → value' }),
  description: z.string().max(4000).nullable().optional(),
  higherIsBetter: z.boolean().optional().meta({ description: 'The direction of the verdicts of a comparison; default true' }),
  archived: z.boolean().optional(),
};

type ConfigShape = {
  dataType?: (typeof scoreDataTypes)[number] | undefined;
  min?: number | null | undefined;
  max?: number | null | undefined;
  categories?: { label: string; value: number }[] | null | undefined;
};

/** The rules between fields, each naming the path it is about; none when the config holds together. */
export function configFieldIssues(config: ConfigShape): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const { dataType, min, max, categories } = config;
  if (dataType !== undefined && dataType !== 'numeric') {
    if (min != null) issues.push({ path: ['min'], message: 'only a numeric config has a minimum' });
    if (max != null) issues.push({ path: ['max'], message: 'only a numeric config has a maximum' });
  }
  if (min != null && max != null && min > max) issues.push({ path: ['max'], message: 'must be at least min' });
  if (dataType === 'categorical' && (categories == null || categories.length === 0))
    issues.push({ path: ['categories'], message: 'a categorical config needs its categories' });
  if (dataType !== undefined && dataType !== 'categorical' && categories != null)
    issues.push({ path: ['categories'], message: 'only a categorical config has categories' });
  const seen = new Set<string>();
  (categories ?? []).forEach((category, index) => {
    if (seen.has(category.label)) issues.push({ path: ['categories', index, 'label'], message: 'is given twice' });
    seen.add(category.label);
  });
  return issues;
}

export const createScoreConfigBody = z.object(configFields).superRefine((config, ctx) => {
  for (const issue of configFieldIssues(config)) ctx.addIssue({ code: 'custom', ...issue });
});
export type CreateScoreConfig = z.infer<typeof createScoreConfigBody>;

/** A change of some fields; the name and type are fixed once scores use them. */
export const updateScoreConfigBody = z
  .object({
    min: configFields.min,
    max: configFields.max,
    categories: configFields.categories,
    description: configFields.description,
    higherIsBetter: configFields.higherIsBetter,
    archived: configFields.archived,
  })
  .strict();
export type UpdateScoreConfig = z.infer<typeof updateScoreConfigBody>;

export const scoreConfigSchema = z.object({
  id: z.string(),
  name: z.string(),
  dataType: z.enum(scoreDataTypes),
  min: z.number().nullable(),
  max: z.number().nullable(),
  categories: z.array(categorySchema).nullable(),
  description: z.string().nullable(),
  higherIsBetter: z.boolean(),
  archived: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ScoreConfig = z.infer<typeof scoreConfigSchema>;

export const scoreConfigParams = z.object({ id: z.uuid() });
export const listScoreConfigsQuery = z.object({
  includeArchived: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true'),
});
