/**
 * Turns any value into one JSON.stringify can always write: a span's input or output is
 * whatever the application passed, and one circular object must not lose a whole batch.
 */
export function toJsonSafe(value: unknown, maxDepth = 20): unknown {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'undefined') return undefined;
    if (typeof v === 'function') return `[Function ${v.name || 'anonymous'}]`;
    if (typeof v === 'symbol') return v.toString();
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
    if (v instanceof Error) return { name: v.name, message: v.message };
    if (seen.has(v)) return '[Circular]';
    if (depth >= maxDepth) return '[MaxDepth]';
    seen.add(v);
    try {
      if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1) ?? null);
      if (v instanceof Map) return walk(Object.fromEntries(v), depth);
      if (v instanceof Set) return walk([...v], depth);
      if (ArrayBuffer.isView(v)) return `[${v.constructor.name} ${v.byteLength} bytes]`;
      const toJSON = (v as { toJSON?: () => unknown }).toJSON;
      if (typeof toJSON === 'function') return walk(toJSON.call(v), depth + 1);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        const safe = walk(item, depth + 1);
        if (safe !== undefined) out[key] = safe;
      }
      return out;
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0);
}

/** A JSON-safe plain object, or undefined when the value is not an object. */
export function toJsonObject(value: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const safe = toJsonSafe(value);
  return safe !== null && typeof safe === 'object' && !Array.isArray(safe) ? (safe as Record<string, unknown>) : undefined;
}
