import type { ScoreConfig } from '../api/config-schemas.js';
import type { ScoreInput } from '../api/schemas.js';

/**
 * What a score's value means: its data type (sent, else its config's, else from the value's
 * JSON type) and its stored value and category, checked against the config of its name when
 * the workspace has one. Pure: no store, no HTTP.
 */

export type ScoreDataType = 'numeric' | 'categorical' | 'boolean';

export interface ResolvedValue {
  dataType: ScoreDataType;
  /** numeric: as sent; boolean: 0 or 1; categorical: the category's value in the config, else 0. */
  value: number;
  /** categorical: the label; boolean: 'true' / 'false'; numeric: ''. */
  stringValue: string;
  configId: string;
}

export interface ScoreIssue {
  /** The field of the score the problem is about (`value`, `dataType`). */
  field: string;
  message: string;
}

function inferredType(value: ScoreInput['value']): ScoreDataType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'categorical';
  return 'numeric';
}

export function resolveScoreValue(score: ScoreInput, config: ScoreConfig | undefined): ResolvedValue | ScoreIssue {
  const dataType = score.dataType ?? config?.dataType ?? inferredType(score.value);
  if (config && dataType !== config.dataType)
    return { field: 'dataType', message: `the config of "${config.name}" says ${config.dataType}, not ${dataType}` };
  const configId = config?.id ?? '';
  const { value } = score;

  if (dataType === 'numeric') {
    if (typeof value !== 'number') return { field: 'value', message: 'a numeric score takes a number' };
    if (config?.min != null && value < config.min) return { field: 'value', message: `must be at least ${config.min} (config)` };
    if (config?.max != null && value > config.max) return { field: 'value', message: `must be at most ${config.max} (config)` };
    return { dataType, value, stringValue: '', configId };
  }

  if (dataType === 'boolean') {
    const truth = typeof value === 'boolean' ? value : value === 1 ? true : value === 0 ? false : undefined;
    if (truth === undefined) return { field: 'value', message: 'a boolean score takes true, false, 1 or 0' };
    return { dataType, value: truth ? 1 : 0, stringValue: truth ? 'true' : 'false', configId };
  }

  // Categorical: a label, or with a config the value of one of its categories.
  if (config?.categories) {
    const category = config.categories.find((c) => (typeof value === 'string' ? c.label === value : c.value === value));
    if (!category)
      return { field: 'value', message: `must be one of the config's categories: ${config.categories.map((c) => c.label).join(', ')}` };
    return { dataType, value: category.value, stringValue: category.label, configId };
  }
  if (typeof value !== 'string') return { field: 'value', message: 'a categorical score takes a label (a string)' };
  return { dataType, value: 0, stringValue: value, configId };
}

export const isIssue = (resolved: ResolvedValue | ScoreIssue): resolved is ScoreIssue => 'field' in resolved;
