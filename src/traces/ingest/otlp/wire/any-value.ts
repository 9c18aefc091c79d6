import type { AttributeValue, Attributes, PlainAnyValue, PlainKeyValue } from './model.js';
import { putKey } from '../../../../http/wire/json-bounds.js';

const toBase64 = (bytes: string | Uint8Array) =>
  typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/**
 * Unwraps one OTLP AnyValue. int64 values beyond 2^53 stay decimal strings so no digit is
 * lost; bytes become base64 text (what OTLP/JSON sends).
 */
export function fromAnyValue(value: PlainAnyValue | undefined): AttributeValue {
  if (value === undefined || value === null) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) {
    const n = Number(value.intValue);
    return Number.isSafeInteger(n) ? n : String(value.intValue);
  }
  if (value.doubleValue !== undefined) {
    // OTLP/JSON spells NaN and the infinities as strings; JSON has no number for them.
    return typeof value.doubleValue === 'number' ? value.doubleValue : String(value.doubleValue);
  }
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(fromAnyValue);
  if (value.kvlistValue !== undefined) return fromKeyValues(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return toBase64(value.bytesValue);
  return null;
}

export function fromKeyValues(list: PlainKeyValue[] | undefined): Attributes {
  const out: Attributes = {};
  if (!list) return out;
  // A key is data: `__proto__` too is kept as the attribute it is (putKey).
  for (const kv of list) putKey(out, kv.key, fromAnyValue(kv.value));
  return out;
}
