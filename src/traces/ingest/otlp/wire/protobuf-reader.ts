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
    // prettier-ignore
    switch (t >>> 3) {
      case 4: out.parentSpanId = r.bytesField(t, end); break;
      case 5: out.name = r.textField(t, end); break;
      case 6: out.kind = r.enumField(t); break;
      case 7: out.startTimeUnixNano = r.timeField(t); break;
      case 8: out.endTimeUnixNano = r.timeField(t); break;
      case 9: out.attributes = withKeyValue(r, out.attributes, r.messageField(t, end), 9, maxDepth); break;
      case 10: out.droppedAttributesCount = r.countField(t); break;
      case 11: (out.events ??= []).push(event(r, r.messageField(t, end), maxDepth)); break;
      case 12: out.droppedEventsCount = r.countField(t); break;
      case 13: (out.links ??= []).push(link(r, r.messageField(t, end), maxDepth)); break;
      case 14: out.droppedLinksCount = r.countField(t); break;
      case 15: out.status = status(r, once(out.status, r.messageField(t, end))); break;
      case 16: out.flags = r.flagsField(t); break;
      default: spanContextOrSkip(r, t, end, out);
    }
  }
  r.close(end);
  return out;
}

/** Span and Link begin alike: trace id (1), span id (2), trace state (3); any other field left is unknown and skipped. */
function spanContextOrSkip(r: WireReader, t: number, end: number, out: Pick<PlainLink, 'traceId' | 'spanId' | 'traceState'>) {
  const field = t >>> 3;
  if (field === 1) out.traceId = r.bytesField(t, end);
  else if (field === 2) out.spanId = r.bytesField(t, end);
  else if (field === 3) out.traceState = r.textField(t, end);
  else r.skip(t, end);
}

/** A singular message field sent twice is merged by protobufjs: left to it. */
function once(present: unknown, end: number): number {
  if (present !== undefined) giveUp();
  return end;
}

/** An event or a link (9th level, their attributes list the 10th, a KeyValue the 11th). */
function event(r: WireReader, end: number, maxDepth: number): PlainEvent {
  const out: PlainEvent = {};
  while (r.pos < end) {
    const t = r.tag();
    // prettier-ignore
    switch (t >>> 3) {
      case 1: out.timeUnixNano = r.timeField(t); break;
      case 2: out.name = r.textField(t, end); break;
      case 3: out.attributes = withKeyValue(r, out.attributes, r.messageField(t, end), 11, maxDepth); break;
      case 4: out.droppedAttributesCount = r.countField(t); break;
      default: r.skip(t, end);
    }
  }
  r.close(end);
  return out;
}

function link(r: WireReader, end: number, maxDepth: number): PlainLink {
  const out: PlainLink & { droppedAttributesCount?: number } = {};
  while (r.pos < end) {
    const t = r.tag();
    // prettier-ignore
    switch (t >>> 3) {
      case 4: out.attributes = withKeyValue(r, out.attributes, r.messageField(t, end), 11, maxDepth); break;
      case 5: out.droppedAttributesCount = r.countField(t); break;
      case 6: out.flags = r.flagsField(t); break;
      default: spanContextOrSkip(r, t, end, out);
    }
  }
  r.close(end);
  return out;
}

function status(r: WireReader, end: number): PlainStatus {
  const out: PlainStatus = {};
  while (r.pos < end) {
    const t = r.tag();
    // prettier-ignore
    switch (t >>> 3) {
      case 2: out.message = r.textField(t, end); break;
      case 3: out.code = r.enumField(t); break;
      default: r.skip(t, end);
    }
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
    if (scope && field === -1) out.name = r.textField(t, end);
    else if (scope && field === 0) out.version = r.textField(t, end);
    else if (field === 1) out.attributes = withKeyValue(r, out.attributes, r.messageField(t, end), level + 2, maxDepth);
    else if (field === 2) out.droppedAttributesCount = r.countField(t);
    else r.skip(t, end);
  }
  r.close(end);
  return out;
}

/**
 * ResourceSpans and ScopeSpans have one shape: their resource or scope (1), a repeated message
 * (2: the scope spans, or the spans), a schema URL (3).
 */
function spansOf<Item>(r: WireReader, end: number, scope: boolean, maxDepth: number, item: (end: number) => Item) {
  let head: ReturnType<typeof resourceOrScope> | undefined;
  let items: Item[] | undefined;
  let schemaUrl: string | undefined;
  while (r.pos < end) {
    const t = r.tag();
    // prettier-ignore
    switch (t >>> 3) {
      case 1: head = resourceOrScope(r, once(head, r.messageField(t, end)), scope, scope ? 6 : 4, maxDepth); break;
      case 2: (items ??= []).push(item(r.messageField(t, end))); break;
      case 3: schemaUrl = r.textField(t, end); break;
      default: r.skip(t, end);
    }
  }
  r.close(end);
  return { head, items, schemaUrl };
}

function scopeSpans(r: WireReader, end: number, maxDepth: number): PlainScopeSpans {
  const { head, items, schemaUrl } = spansOf(r, end, true, maxDepth, (to) => span(r, to, maxDepth));
  const out: PlainScopeSpans = {};
  if (head) out.scope = head;
  if (items) out.spans = items;
  if (schemaUrl !== undefined) out.schemaUrl = schemaUrl;
  return out;
}

function resourceSpans(r: WireReader, end: number, maxDepth: number): PlainResourceSpans {
  const { head, items, schemaUrl } = spansOf(r, end, false, maxDepth, (to) => scopeSpans(r, to, maxDepth));
  const out: PlainResourceSpans = {};
  if (head) out.resource = head;
  if (items) out.scopeSpans = items;
  if (schemaUrl !== undefined) out.schemaUrl = schemaUrl;
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
