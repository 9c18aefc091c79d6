import type { AttributeValue, Attributes } from '../wire/model.js';
import { putKey } from '../../../../http/wire/json-bounds.js';

/**
 * Attribute values too large to be worth storing whole: embedding vectors (a few thousand
 * floats per input, which nobody reads in a trace) and any value past `maxValueChars` of text.
 * They are replaced by a marker saying what was there, and each trim is listed in the span's
 * metadata.otel.trimmed, so a span is never refused for its size and nothing vanishes unsaid.
 */
export interface Trim {
  key: string;
  reason: string;
  /** The size of what was removed: characters of text, or numbers of a vector. */
  chars?: number;
  numbers?: number;
}

export const maxValueChars = 32_768;

const vectorKey = /(?:^|\.)(?:embedding\.vector|embeddings?|vector)$/;

const isNumberList = (value: AttributeValue): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'number');

/** The marker a trimmed vector leaves. */
export const vectorMarker = (length: number) => `[vector of ${length} numbers not stored]`;

/** Characters of a value as stored: text as is, structures as JSON. */
export function sizeOfValue(value: AttributeValue | undefined): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 0;
  return JSON.stringify(value).length;
}

/** A copy of `attributes` with vectors and oversized values replaced by markers (the same object when nothing is trimmed). */
export function trimAttributes(attributes: Attributes, prefix: string, trims: Trim[]): Attributes {
  let out: Attributes | undefined;
  for (const key in attributes) {
    const value = attributes[key]!;
    let replacement: AttributeValue | undefined;
    if (isNumberList(value) && (vectorKey.test(key) || value.length > 256)) {
      replacement = vectorMarker(value.length);
      trims.push({ key: prefix + key, reason: 'embedding vector', numbers: value.length });
    } else if (typeof value === 'string' && value.length > maxValueChars) {
      replacement = `${value.slice(0, maxValueChars)}… [${value.length - maxValueChars} more characters not stored]`;
      trims.push({ key: prefix + key, reason: 'value too long', chars: value.length });
    } else if (typeof value === 'object' && value !== null && sizeOfValue(value) > maxValueChars) {
      const text = JSON.stringify(value);
      replacement = `${text.slice(0, maxValueChars)}… [${text.length - maxValueChars} more characters not stored]`;
      trims.push({ key: prefix + key, reason: 'value too long', chars: text.length });
    }
    if (replacement === undefined) continue;
    out ??= { ...attributes };
    putKey(out, key, replacement);
  }
  return out ?? attributes;
}

/**
 * JSON text with embedding vectors inside (an embeddings API response kept as raw text): each
 * list of numbers under an `embedding` key becomes the marker. Other text is returned as is.
 */
export function trimVectorsInJson(text: string, key: string, trims: Trim[]): string {
  if (!text.includes('"embedding"')) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  let count = 0;
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'embedding' && isNumberList(v as AttributeValue)) {
        putKey(out, k, vectorMarker((v as number[]).length));
        count += (v as number[]).length;
      } else putKey(out, k, walk(v));
    }
    return out;
  };
  const trimmed = walk(parsed);
  if (count === 0) return text;
  trims.push({ key, reason: 'embedding vector', numbers: count });
  return JSON.stringify(trimmed);
}
