import type { PlainExportRequest, PlainKeyValue, PlainSpan } from './model.js';
import { withKeyValue } from './protobuf-values.js';
import { GiveUp, giveUp, WireReader } from './protobuf-wire.js';

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

type PlainEvent = NonNullable<PlainSpan['events']>[number];
type PlainLink = NonNullable<PlainSpan['links']>[number];
type PlainStatus = NonNullable<PlainSpan['status']>;
type PlainResourceSpans = NonNullable<PlainExportRequest['resourceSpans']>[number];
type PlainScopeSpans = NonNullable<PlainResourceSpans['scopeSpans']>[number];

function span(r: WireReader, end: number, maxDepth: number): PlainSpan {
  const out: PlainSpan = {};
  while (r.pos < end) {
    const t = r.tag();
    switch (t >>> 3) {
      case 1:
        r.expect(t, 2);
        out.traceId = r.bytes(end);
        break;
      case 2:
        r.expect(t, 2);
        out.spanId = r.bytes(end);
        break;
      case 3:
        r.expect(t, 2);
        out.traceState = r.text(end);
        break;
      case 4:
        r.expect(t, 2);
        out.parentSpanId = r.bytes(end);
        break;
      case 5:
        r.expect(t, 2);
        out.name = r.text(end);
        break;
      case 6:
        r.expect(t, 0);
        out.kind = r.uint32() | 0 || undefined;
        break;
      case 7:
        r.expect(t, 1);
        out.startTimeUnixNano = r.fixed64();
        break;
      case 8:
        r.expect(t, 1);
        out.endTimeUnixNano = r.fixed64();
        break;
      case 9:
        r.expect(t, 2);
        out.attributes = withKeyValue(r, out.attributes, end, 9, maxDepth);
        break;
      case 10:
        r.expect(t, 0);
        out.droppedAttributesCount = r.uint32() || undefined; // 0 is the default: absent, as protobufjs reads it
        break;
      case 11:
        r.expect(t, 2);
        (out.events ??= []).push(event(r, r.limitOf(end), maxDepth));
        break;
      case 12:
        r.expect(t, 0);
        out.droppedEventsCount = r.uint32() || undefined; // 0 is the default: absent, as protobufjs reads it
        break;
      case 13:
        r.expect(t, 2);
        (out.links ??= []).push(link(r, r.limitOf(end), maxDepth));
        break;
      case 14:
        r.expect(t, 0);
        out.droppedLinksCount = r.uint32() || undefined; // 0 is the default: absent, as protobufjs reads it
        break;
      case 15:
        r.expect(t, 2);
        if (out.status) giveUp();
        out.status = status(r, r.limitOf(end));
        break;
      case 16:
        r.expect(t, 5);
        out.flags = r.fixed32() || undefined;
        break;
      default:
        r.skip(t, end);
    }
  }
  r.close(end);
  return out;
}

/** An event or a link (9th level, their attributes list the 10th, a KeyValue the 11th). */
function event(r: WireReader, end: number, maxDepth: number): PlainEvent {
  const out: PlainEvent = {};
  while (r.pos < end) {
    const t = r.tag();
    switch (t >>> 3) {
      case 1:
        r.expect(t, 1);
        out.timeUnixNano = r.fixed64();
        break;
      case 2:
        r.expect(t, 2);
        out.name = r.text(end);
        break;
      case 3:
        r.expect(t, 2);
        out.attributes = withKeyValue(r, out.attributes, end, 11, maxDepth);
        break;
      case 4:
        r.expect(t, 0);
        out.droppedAttributesCount = r.uint32() || undefined; // 0 is the default: absent, as protobufjs reads it
        break;
      default:
        r.skip(t, end);
    }
  }
  r.close(end);
  return out;
}

function link(r: WireReader, end: number, maxDepth: number): PlainLink {
  const out: PlainLink & { droppedAttributesCount?: number } = {};
  while (r.pos < end) {
    const t = r.tag();
    switch (t >>> 3) {
      case 1:
        r.expect(t, 2);
        out.traceId = r.bytes(end);
        break;
      case 2:
        r.expect(t, 2);
        out.spanId = r.bytes(end);
        break;
      case 3:
        r.expect(t, 2);
        out.traceState = r.text(end);
        break;
      case 4:
        r.expect(t, 2);
        out.attributes = withKeyValue(r, out.attributes, end, 11, maxDepth);
        break;
      case 5:
        r.expect(t, 0);
        out.droppedAttributesCount = r.uint32() || undefined; // 0 is the default: absent, as protobufjs reads it
        break;
      case 6:
        r.expect(t, 5);
        out.flags = r.fixed32() || undefined;
        break;
      default:
        r.skip(t, end);
    }
  }
  r.close(end);
  return out;
}

function status(r: WireReader, end: number): PlainStatus {
  const out: PlainStatus = {};
  while (r.pos < end) {
    const t = r.tag();
    if (t >>> 3 === 2) {
      r.expect(t, 2);
      out.message = r.text(end);
    } else if (t >>> 3 === 3) {
      r.expect(t, 0);
      out.code = r.uint32() | 0 || undefined;
    } else r.skip(t, end);
  }
  r.close(end);
  return out;
}

/** Resource (4th level: name, version absent) or InstrumentationScope (6th level). */
function resourceOrScope(r: WireReader, end: number, scope: boolean, level: number, maxDepth: number) {
  const out: { name?: string; version?: string; attributes?: PlainKeyValue[]; droppedAttributesCount?: number } = {};
  // Resource: attributes 1, dropped 2; scope: name 1, version 2, attributes 3, dropped 4.
  const shift = scope ? 2 : 0;
  while (r.pos < end) {
    const t = r.tag();
    const field = (t >>> 3) - shift;
    if (scope && (field === -1 || field === 0)) {
      r.expect(t, 2);
      if (field === -1) out.name = r.text(end);
      else out.version = r.text(end);
    } else if (field === 1) {
      r.expect(t, 2);
      out.attributes = withKeyValue(r, out.attributes, end, level + 2, maxDepth);
    } else if (field === 2) {
      r.expect(t, 0);
      out.droppedAttributesCount = r.uint32() || undefined; // 0 is the default: absent, as protobufjs reads it
    } else r.skip(t, end);
  }
  r.close(end);
  return out;
}

function scopeSpans(r: WireReader, end: number, maxDepth: number): PlainScopeSpans {
  const out: PlainScopeSpans = {};
  while (r.pos < end) {
    const t = r.tag();
    const field = t >>> 3;
    if (field === 1) {
      r.expect(t, 2);
      if (out.scope) giveUp();
      out.scope = resourceOrScope(r, r.limitOf(end), true, 6, maxDepth);
    } else if (field === 2) {
      r.expect(t, 2);
      (out.spans ??= []).push(span(r, r.limitOf(end), maxDepth));
    } else if (field === 3) {
      r.expect(t, 2);
      out.schemaUrl = r.text(end);
    } else r.skip(t, end);
  }
  r.close(end);
  return out;
}

function resourceSpans(r: WireReader, end: number, maxDepth: number): PlainResourceSpans {
  const out: PlainResourceSpans = {};
  while (r.pos < end) {
    const t = r.tag();
    const field = t >>> 3;
    if (field === 1) {
      r.expect(t, 2);
      if (out.resource) giveUp();
      out.resource = resourceOrScope(r, r.limitOf(end), false, 4, maxDepth);
    } else if (field === 2) {
      r.expect(t, 2);
      (out.scopeSpans ??= []).push(scopeSpans(r, r.limitOf(end), maxDepth));
    } else if (field === 3) {
      r.expect(t, 2);
      out.schemaUrl = r.text(end);
    } else r.skip(t, end);
  }
  r.close(end);
  return out;
}

/**
 * The plain request of a protobuf body, or undefined when the body is anything but an
 * ordinary request (protobufjs then decodes it). `maxDepth`: the nesting bound of json.ts.
 */
export function readExportRequest(body: Buffer, maxDepth: number): PlainExportRequest | undefined {
  const r = new WireReader(body);
  try {
    const request: PlainExportRequest = {};
    while (r.pos < body.length) {
      const t = r.tag();
      if (t >>> 3 === 1) {
        r.expect(t, 2);
        (request.resourceSpans ??= []).push(resourceSpans(r, r.limitOf(body.length), maxDepth));
      } else r.skip(t, body.length);
    }
    return request;
  } catch (error) {
    if (error instanceof GiveUp || error instanceof RangeError) return undefined;
    throw error;
  }
}
