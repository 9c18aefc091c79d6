import { z } from 'zod';

/**
 * Bounds on free-form JSON values (attributes, metadata, `input.raw`, output schemas...).
 * Every walk here uses an explicit stack, never recursion, so no input can overflow the call
 * stack however deep it nests; a value over the depth limit is refused with its path before
 * anything recursive (JSON.stringify, the JSON Schema compiler, the store's parser) sees it.
 */

// ES2024 string methods, present in Node 20 (the project's lib is ES2022).
declare global {
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/** Levels of nesting a JSON value may have inside its field (`{"a":{"b":1}}` is 2). */
export const maxJsonDepth = 32;

/** Text PostgreSQL cannot hold: it has no NUL character in `text` or `jsonb`. */
// eslint-disable-next-line no-control-regex -- the NUL character is what this pattern is about
export const noNulPattern = /^[^\u0000]*$/;
export const noNulMessage = 'must not contain the NUL character (\\u0000)';

export interface JsonProblem {
  path: (string | number)[];
  message: string;
}

/** A value on the walk's stack: its parent and its key there make its path, only for a problem found. */
interface Entry {
  value: unknown;
  depth: number;
  parent: Entry | undefined;
  key: string | number;
}

function pathOf(entry: Entry | undefined, last?: string): (string | number)[] {
  const path: (string | number)[] = last === undefined ? [] : [last];
  for (let at = entry; at?.parent; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * The first problem of a JSON value: nesting deeper than `maxDepth`, or (with `noNul`) a NUL
 * in a key or a string. Containers count as one level each; scalars add none.
 */
export function jsonProblem(value: unknown, options: { maxDepth?: number; noNul?: boolean } = {}): JsonProblem | undefined {
  const maxDepth = options.maxDepth ?? maxJsonDepth;
  const stack: Entry[] = [{ value, depth: 0, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const { value: current, depth } = entry;
    if (typeof current === 'string') {
      if (options.noNul && current.includes('\u0000')) return { path: pathOf(entry), message: noNulMessage };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > maxDepth) return { path: pathOf(entry), message: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], depth: depth + 1, parent: entry, key: i });
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (options.noNul && key.includes('\u0000')) return { path: pathOf(entry, key), message: `key ${noNulMessage}` };
      stack.push({ value: (current as Record<string, unknown>)[key], depth: depth + 1, parent: entry, key });
    }
  }
  return undefined;
}

/**
 * A free-form JSON object whose keys are data, every one kept as sent: `__proto__` and
 * `constructor` included, which are legal JSON keys (span attributes may well have them).
 * zod's records leave a `__proto__` key out; this passes the object through as parsed, where
 * `JSON.parse` made every key an own property, so nothing reaches a prototype. Code that copies
 * such an object's keys one by one uses `putKey`.
 */
export function jsonObject() {
  return z
    .custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
      message: 'Invalid input: expected an object',
    })
    .meta({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} });
}

/**
 * Sets `record[key]` as an own property, whatever the key: a plain assignment of `__proto__`
 * would set the record's prototype instead (an object value's members then show through as
 * the record's; a string is dropped).
 */
export function putKey<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

/** A zod check for a JSON field: nesting bounded, NUL refused where the value goes to PostgreSQL. */
export function boundedJson<T extends z.ZodType>(schema: T, options: { noNul?: boolean } = {}) {
  return schema
    .superRefine((value, ctx) => {
      const problem = jsonProblem(value, options);
      if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    })
    .meta({
      description: `JSON nested at most ${maxJsonDepth} levels${options.noNul ? '; no NUL (\\u0000) in keys or strings' : ''}`,
    });
}

/**
 * Replaces lone UTF-16 surrogates (text no UTF-8 store can hold) by U+FFFD in every string
 * and key of a parsed JSON value, in place. Strings that are well formed (nearly all) cost
 * one native check each.
 */
export function repairLoneSurrogates<T>(value: T): T {
  if (typeof value === 'string') return (value.isWellFormed() ? value : value.toWellFormed()) as T;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const item: unknown = current[i];
        if (typeof item === 'string') {
          if (!item.isWellFormed()) current[i] = item.toWellFormed();
        } else if (item !== null && typeof item === 'object') stack.push(item);
      }
      continue;
    }
    const record = current as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      let item = record[key];
      if (typeof item === 'string' && !item.isWellFormed()) item = record[key] = item.toWellFormed();
      if (!key.isWellFormed()) {
        delete record[key];
        putKey(record, key.toWellFormed(), item);
      }
      if (item !== null && typeof item === 'object') stack.push(item);
    }
  }
  return value;
}
