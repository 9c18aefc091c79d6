import type { AttributeValue, Attributes, SpanMessage } from '../wire/model.js';
import { putKey } from '../../../../http/wire/json-bounds.js';

/** Attribute values that are JSON text (as many instrumentations send structures) are parsed. */
export function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const t = value.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return value;
  try {
    return JSON.parse(t);
  } catch {
    return value;
  }
}

export const asString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;

export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text for a message's content: strings as they are, anything else as JSON. */
export const asText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);

/** Tool arguments are an object on the native side; JSON text is parsed, anything else wrapped. */
export function asArguments(value: unknown): Record<string, unknown> {
  const parsed = parseMaybeJson(value);
  if (isRecord(parsed)) return parsed;
  return parsed === undefined || parsed === null || parsed === '' ? {} : { value: parsed };
}

const roles: Record<string, SpanMessage['role']> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  human: 'user',
  assistant: 'assistant',
  model: 'assistant',
  ai: 'assistant',
  tool: 'tool',
  function: 'tool',
  ipython: 'tool',
};

/** Maps a producer's role onto the four native roles; `exact` is false when it had to guess. */
export function toRole(value: unknown): { role: SpanMessage['role']; exact: boolean } {
  const raw = typeof value === 'string' ? value.toLowerCase() : '';
  const role = roles[raw];
  return role ? { role, exact: raw === role } : { role: 'user', exact: false };
}

/**
 * Groups flattened indexed attributes (`prefix.0.message.role`, `prefix.1.message.content`)
 * into one record per index, and reports the keys it read.
 */
export function collectIndexed(attrs: Record<string, unknown>, prefix: string) {
  const items = new Map<number, Record<string, unknown>>();
  const keys: string[] = [];
  // Senders list the indexes in order; the items are sorted only when they were not.
  let inOrder = true;
  let last = -1;
  for (const key in attrs) {
    if (!key.startsWith(prefix)) continue;
    const value = attrs[key];
    const rest = key.slice(prefix.length);
    const dot = rest.indexOf('.');
    const index = Number(dot === -1 ? rest : rest.slice(0, dot));
    if (!Number.isInteger(index) || index < 0) continue;
    let item = items.get(index);
    if (!item) {
      items.set(index, (item = {}));
      if (index < last) inOrder = false;
      last = index;
    }
    putKey(item, dot === -1 ? '' : rest.slice(dot + 1), value);
    keys.push(key);
  }
  const ordered = inOrder ? [...items.values()] : [...items.entries()].sort((a, b) => a[0] - b[0]).map(([, item]) => item);
  return { items: ordered, keys };
}

export type { AttributeValue, Attributes };
