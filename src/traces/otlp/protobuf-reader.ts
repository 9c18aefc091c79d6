import { isUtf8 } from 'node:buffer';
import type { PlainAnyValue, PlainExportRequest, PlainKeyValue, PlainSpan } from './model.js';

/**
 * A direct reader of protobuf ExportTraceServiceRequest bodies into the plain objects of
 * model.ts, the same objects protobufjs's `decode` then `toObject` give (protobuf.ts), without
 * building the messages first and copying them after (most of the bridge's decoding time).
 *
 * It reads only what it is sure of. Anything unusual (a field with a wire type the schema does
 * not give it, a group, a message field sent twice, two members of AnyValue's oneof, text that
 * is not UTF-8, values nested near the depth bound, a body cut short) makes it give up and
 * return undefined: protobuf.ts then decodes the body with protobufjs, which gives the result
 * or the error it always gave. Unknown fields are skipped, as protobuf readers do.
 */

class GiveUp extends Error {}
const giveUp = () => {
  throw new GiveUp();
};

/** Containers a plain request may nest (json.ts maxOtlpJsonDepth); past `limit - 4` protobufjs decides. */
let depthLimit = 0;

let buf: Buffer = Buffer.alloc(0);
let pos = 0;

function uint32(): number {
  let value = 0;
  let shift = 0;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) giveUp();
    const byte = buf[pos++]!;
    if (shift < 32) value |= (byte & 0x7f) << shift;
    if (byte < 0x80) return value >>> 0;
    shift += 7;
  }
  return giveUp();
}

/** A varint int64: a number when it is exact as one, else its decimal text (as toObject's longs: String). */
function int64(): number | string {
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) giveUp();
    const byte = buf[pos++]!;
    if (i < 4) lo |= (byte & 0x7f) << (7 * i);
    else if (i === 4) {
      lo |= (byte & 0x0f) << 28;
      hi |= (byte & 0x7f) >> 4;
    } else hi |= (byte & 0x7f) << (7 * i - 32);
    if (byte < 0x80) {
      const value = (hi | 0) * 4294967296 + (lo >>> 0);
      if (Number.isSafeInteger(value)) return value;
      return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString();
    }
  }
  return giveUp();
}

function fixed64(): string {
  if (pos + 8 > buf.length) giveUp();
  const value = buf.readBigUInt64LE(pos);
  pos += 8;
  return value.toString();
}

function fixed32(): number {
  if (pos + 4 > buf.length) giveUp();
  const value = buf.readUInt32LE(pos);
  pos += 4;
  return value;
}

function double(): number {
  if (pos + 8 > buf.length) giveUp();
  const value = buf.readDoubleLE(pos);
  pos += 8;
  return value;
}

/** The end of a length-delimited field that starts here. */
function limitOf(end: number): number {
  const length = uint32();
  const to = pos + length;
  if (to > end) giveUp();
  return to;
}

function text(end: number): string {
  const to = limitOf(end);
  const from = pos;
  pos = to;
  if (to === from) return '';
  const value = buf.toString('utf8', from, to);
  // Text with a replacement character may be invalid UTF-8, which protobufjs refuses.
  if (value.includes('\uFFFD') && !isUtf8(buf.subarray(from, to))) giveUp();
  return value;
}

function bytes(end: number): Buffer {
  const to = limitOf(end);
  const value = buf.subarray(pos, to);
  pos = to;
  return value;
}

/** Reads the next tag of a message ending at `end`: [field number, wire type]. */
function tag(): number {
  const value = uint32();
  if (value >>> 3 === 0) giveUp();
  return value;
}

function skip(wire: number, end: number) {
  if (wire === 0) uint32();
  else if (wire === 1) pos += 8;
  else if (wire === 2) pos = limitOf(end);
  else if (wire === 5) pos += 4;
  else giveUp(); // groups and invalid wire types: protobufjs's call
  if (pos > end) giveUp();
}

/** Each read checks its wire type; a field the schema types otherwise is protobufjs's to judge. */
const expect = (value: number, wire: number) => {
  if ((value & 7) !== wire) giveUp();
};

function anyValue(end: number, level: number): PlainAnyValue {
  if (level > depthLimit - 4) giveUp();
  const out: PlainAnyValue = {};
  let set = false;
  const once = () => {
    if (set) giveUp();
    set = true;
  };
  while (pos < end) {
    const t = tag();
    switch (t >>> 3) {
      case 1: expect(t, 2); once(); out.stringValue = text(end); break;
      case 2: expect(t, 0); once(); out.boolValue = uint32() !== 0; break;
      case 3: expect(t, 0); once(); out.intValue = int64(); break;
      case 4: expect(t, 1); once(); out.doubleValue = double(); break;
      case 5: {
        expect(t, 2); once();
        const to = limitOf(end);
        const values: PlainAnyValue[] = [];
        while (pos < to) {
          const v = tag();
          if (v >>> 3 === 1) {
            expect(v, 2);
            values.push(anyValue(limitOf(to), level + 3));
          } else skip(v & 7, to);
        }
        out.arrayValue = values.length > 0 ? { values } : {};
        break;
      }
      case 6: {
        expect(t, 2); once();
        const to = limitOf(end);
        const values: PlainKeyValue[] = [];
        while (pos < to) {
          const v = tag();
          if (v >>> 3 === 1) {
            expect(v, 2);
            values.push(keyValue(limitOf(to), level + 3));
          } else skip(v & 7, to);
        }
        out.kvlistValue = values.length > 0 ? { values } : {};
        break;
      }
      case 7: expect(t, 2); once(); out.bytesValue = bytes(end); break;
      default: skip(t & 7, end);
    }
  }
  if (pos !== end) giveUp();
  return out;
}

/** A KeyValue at `level` (its value one level deeper). */
function keyValue(end: number, level: number): PlainKeyValue {
  let key: string | undefined;
  let value: PlainAnyValue | undefined;
  while (pos < end) {
    const t = tag();
    const field = t >>> 3;
    if (field === 1) {
      expect(t, 2);
      key = text(end);
    } else if (field === 2) {
      expect(t, 2);
      if (value !== undefined) giveUp();
      value = anyValue(limitOf(end), level + 1);
    } else skip(t & 7, end);
  }
  if (pos !== end) giveUp();
  // toObject leaves out what was never sent.
  if (key !== undefined) return value !== undefined ? { key, value } : { key };
  return (value !== undefined ? { value } : {}) as PlainKeyValue;
}

/** Repeated KeyValue field into `list` (created on the first one). */
function pushKeyValue(list: PlainKeyValue[] | undefined, end: number, level: number): PlainKeyValue[] {
  const kv = keyValue(limitOf(end), level);
  if (list) list.push(kv);
  else list = [kv];
  return list;
}

function span(end: number): PlainSpan {
  const out: PlainSpan = {};
  while (pos < end) {
    const t = tag();
    switch (t >>> 3) {
      case 1: expect(t, 2); out.traceId = bytes(end); break;
      case 2: expect(t, 2); out.spanId = bytes(end); break;
      case 3: expect(t, 2); out.traceState = text(end); break;
      case 4: expect(t, 2); out.parentSpanId = bytes(end); break;
      case 5: expect(t, 2); out.name = text(end); break;
      case 6: expect(t, 0); out.kind = uint32() | 0; break;
      case 7: expect(t, 1); out.startTimeUnixNano = fixed64(); break;
      case 8: expect(t, 1); out.endTimeUnixNano = fixed64(); break;
      // Levels as in the plain request: span 7, its attributes list 8, a KeyValue 9.
      case 9: expect(t, 2); out.attributes = pushKeyValue(out.attributes, end, 9); break;
      case 10: expect(t, 0); out.droppedAttributesCount = uint32(); break;
      case 11: expect(t, 2); (out.events ??= []).push(event(limitOf(end))); break;
      case 12: expect(t, 0); out.droppedEventsCount = uint32(); break;
      case 13: expect(t, 2); (out.links ??= []).push(link(limitOf(end))); break;
      case 14: expect(t, 0); out.droppedLinksCount = uint32(); break;
      case 15: expect(t, 2); if (out.status) giveUp(); out.status = status(limitOf(end)); break;
      case 16: expect(t, 5); out.flags = fixed32(); break;
      default: skip(t & 7, end);
    }
  }
  if (pos !== end) giveUp();
  return out;
}

type PlainEvent = NonNullable<PlainSpan['events']>[number];
type PlainLink = NonNullable<PlainSpan['links']>[number];

function event(end: number): PlainEvent {
  const out: PlainEvent = {};
  while (pos < end) {
    const t = tag();
    switch (t >>> 3) {
      case 1: expect(t, 1); out.timeUnixNano = fixed64(); break;
      case 2: expect(t, 2); out.name = text(end); break;
      case 3: expect(t, 2); out.attributes = pushKeyValue(out.attributes, end, 11); break;
      case 4: expect(t, 0); out.droppedAttributesCount = uint32(); break;
      default: skip(t & 7, end);
    }
  }
  if (pos !== end) giveUp();
  return out;
}

function link(end: number): PlainLink {
  const out: PlainLink = {};
  while (pos < end) {
    const t = tag();
    switch (t >>> 3) {
      case 1: expect(t, 2); out.traceId = bytes(end); break;
      case 2: expect(t, 2); out.spanId = bytes(end); break;
      case 3: expect(t, 2); out.traceState = text(end); break;
      case 4: expect(t, 2); out.attributes = pushKeyValue(out.attributes, end, 11); break;
      case 5: expect(t, 0); (out as { droppedAttributesCount?: number }).droppedAttributesCount = uint32(); break;
      case 6: expect(t, 5); out.flags = fixed32(); break;
      default: skip(t & 7, end);
    }
  }
  if (pos !== end) giveUp();
  return out;
}

function status(end: number): NonNullable<PlainSpan['status']> {
  const out: NonNullable<PlainSpan['status']> = {};
  while (pos < end) {
    const t = tag();
    if (t >>> 3 === 2) {
      expect(t, 2);
      out.message = text(end);
    } else if (t >>> 3 === 3) {
      expect(t, 0);
      out.code = uint32() | 0;
    } else skip(t & 7, end);
  }
  if (pos !== end) giveUp();
  return out;
}

type PlainResourceSpans = NonNullable<PlainExportRequest['resourceSpans']>[number];
type PlainScopeSpans = NonNullable<PlainResourceSpans['scopeSpans']>[number];

/** Resource (level 4, its attributes 5) or InstrumentationScope (level 6, its attributes 7). */
function resourceOrScope<T>(end: number, fields: Readonly<Record<number, string>>, level: number): T {
  const out = {} as Record<string, unknown>;
  while (pos < end) {
    const t = tag();
    const name = fields[t >>> 3];
    if (name === 'attributes') {
      expect(t, 2);
      out.attributes = pushKeyValue(out.attributes as PlainKeyValue[] | undefined, end, level + 2);
    } else if (name === 'droppedAttributesCount') {
      expect(t, 0);
      out.droppedAttributesCount = uint32();
    } else if (name !== undefined) {
      expect(t, 2);
      out[name] = text(end);
    } else skip(t & 7, end);
  }
  if (pos !== end) giveUp();
  return out as T;
}

const resourceFields = { 1: 'attributes', 2: 'droppedAttributesCount' } as const;
const scopeFields = { 1: 'name', 2: 'version', 3: 'attributes', 4: 'droppedAttributesCount' } as const;

function scopeSpans(end: number): PlainScopeSpans {
  const out: PlainScopeSpans = {};
  while (pos < end) {
    const t = tag();
    const field = t >>> 3;
    if (field === 1) {
      expect(t, 2);
      if (out.scope) giveUp();
      out.scope = resourceOrScope(limitOf(end), scopeFields, 6);
    } else if (field === 2) {
      expect(t, 2);
      (out.spans ??= []).push(span(limitOf(end)));
    } else if (field === 3) {
      expect(t, 2);
      out.schemaUrl = text(end);
    } else skip(t & 7, end);
  }
  if (pos !== end) giveUp();
  return out;
}

function resourceSpans(end: number): PlainResourceSpans {
  const out: PlainResourceSpans = {};
  while (pos < end) {
    const t = tag();
    const field = t >>> 3;
    if (field === 1) {
      expect(t, 2);
      if (out.resource) giveUp();
      out.resource = resourceOrScope(limitOf(end), resourceFields, 4);
    } else if (field === 2) {
      expect(t, 2);
      (out.scopeSpans ??= []).push(scopeSpans(limitOf(end)));
    } else if (field === 3) {
      expect(t, 2);
      out.schemaUrl = text(end);
    } else skip(t & 7, end);
  }
  if (pos !== end) giveUp();
  return out;
}

/**
 * The plain request of a protobuf body, or undefined when the body is anything but an
 * ordinary request (protobufjs then decodes it). `maxDepth`: the nesting bound of json.ts.
 */
export function readExportRequest(body: Buffer, maxDepth: number): PlainExportRequest | undefined {
  buf = body;
  pos = 0;
  depthLimit = maxDepth;
  try {
    const request: PlainExportRequest = {};
    const end = body.length;
    while (pos < end) {
      const t = tag();
      if (t >>> 3 === 1) {
        expect(t, 2);
        (request.resourceSpans ??= []).push(resourceSpans(limitOf(end)));
      } else skip(t & 7, end);
    }
    return request;
  } catch (error) {
    if (error instanceof GiveUp || error instanceof RangeError) return undefined;
    throw error;
  } finally {
    buf = Buffer.alloc(0);
  }
}
