import type { PlainAnyValue, PlainKeyValue } from './model.js';
import { giveUp, type WireReader } from './protobuf-wire.js';

/**
 * OTLP's common values, AnyValue and KeyValue, read from protobuf into the plain objects of
 * model.ts for protobuf-reader.ts, under the same rule: anything unusual gives up.
 */

/**
 * Levels count containers of the plain request, as json.ts bounds them (maxOtlpJsonDepth): a
 * span is the 7th, its attributes list the 8th, a KeyValue the 9th, its AnyValue the 10th.
 * Values within 4 levels of the bound are left to protobufjs, which refuses past it.
 */
function anyValue(r: WireReader, end: number, level: number, maxDepth: number): PlainAnyValue {
  if (level > maxDepth - 4) giveUp();
  const out: PlainAnyValue = {};
  let members = 0;
  while (r.pos < end) {
    const t = r.tag();
    const field = t >>> 3;
    if (field < 1 || field > 7) {
      r.skip(t, end);
      continue;
    }
    // A oneof sent twice: protobufjs decides which member stands.
    if (++members > 1) giveUp();
    if (field === 1) out.stringValue = r.textField(t, end);
    else if (field === 2) {
      r.expect(t, 0);
      out.boolValue = r.uint32() !== 0;
    } else if (field === 3) {
      r.expect(t, 0);
      out.intValue = r.int64();
    } else if (field === 4) {
      r.expect(t, 1);
      out.doubleValue = r.double();
    } else if (field === 7) out.bytesValue = r.bytesField(t, end);
    else {
      // 5: ArrayValue {repeated AnyValue values = 1}; 6: KeyValueList {repeated KeyValue values = 1}.
      const to = r.messageField(t, end);
      const values: (PlainAnyValue | PlainKeyValue)[] = [];
      while (r.pos < to) {
        const v = r.tag();
        if (v >>> 3 !== 1) {
          r.skip(v, to);
          continue;
        }
        const itemEnd = r.messageField(v, to);
        values.push(field === 5 ? anyValue(r, itemEnd, level + 3, maxDepth) : keyValue(r, itemEnd, level + 3, maxDepth));
      }
      const list = values.length > 0 ? { values } : {};
      if (field === 5) out.arrayValue = list as { values?: PlainAnyValue[] };
      else out.kvlistValue = list as { values?: PlainKeyValue[] };
    }
  }
  r.close(end);
  return out;
}

/** A KeyValue at `level` (its value one level deeper); toObject leaves out what was never sent. */
function keyValue(r: WireReader, end: number, level: number, maxDepth: number): PlainKeyValue {
  let key: string | undefined;
  let value: PlainAnyValue | undefined;
  while (r.pos < end) {
    const t = r.tag();
    const field = t >>> 3;
    if (field === 1) key = r.textField(t, end);
    else if (field === 2) {
      const to = r.messageField(t, end);
      if (value !== undefined) giveUp();
      value = anyValue(r, to, level + 1, maxDepth);
    } else r.skip(t, end);
  }
  r.close(end);
  if (key !== undefined) return value !== undefined ? { key, value } : { key };
  return (value !== undefined ? { value } : {}) as PlainKeyValue;
}

/** One more KeyValue of a repeated field, ending at `end` (the list made on the first one). */
export function withKeyValue(
  r: WireReader,
  list: PlainKeyValue[] | undefined,
  end: number,
  level: number,
  maxDepth: number,
): PlainKeyValue[] {
  const kv = keyValue(r, end, level, maxDepth);
  if (!list) return [kv];
  list.push(kv);
  return list;
}
