import type { EvaluationTarget } from '../../contract/evaluation-targets.js';

/**
 * The value of a target field (`input`, `output.answer`, `metadata.user.tier`,
 * `attributes.gen_ai.request.model`): own keys only, undefined when a step is missing. An
 * attribute key may itself hold dots (OpenTelemetry names do): the longest key that matches
 * wins at each step.
 */
export function readTargetField(target: EvaluationTarget, field: string): unknown {
  const [root, ...rest] = field.split('.');
  let value: unknown = (target as unknown as Record<string, unknown>)[root!];
  let parts = rest;
  while (parts.length > 0) {
    if (value === null || typeof value !== 'object') return undefined;
    const holder = value as Record<string, unknown>;
    let taken = 0;
    for (let n = parts.length; n >= 1; n -= 1) {
      const key = parts.slice(0, n).join('.');
      if (Object.hasOwn(holder, key)) {
        value = holder[key];
        taken = n;
        break;
      }
    }
    if (taken === 0) return undefined;
    parts = parts.slice(taken);
  }
  return value;
}

/** A field as text for a prompt variable or a text check: strings as they are, anything else as JSON. */
export function fieldText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
