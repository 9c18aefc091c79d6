import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportRequest } from '../../bench/otlp-data.js';
import { repairLoneSurrogates } from '../../src/http/wire/json-bounds.js';
import { spanSchema, type Span } from '../../src/traces/model/schemas.js';
import { decodeJsonRequest, parseOtlpJson } from '../../src/traces/ingest/otlp/wire/json.js';
import type { NativeTrace } from '../../src/traces/ingest/otlp/wire/model.js';
import { normalizeExport, type SpanRejection } from '../../src/traces/ingest/otlp/mapping/normalize.js';
import { decodeProtobufRequest, encodeProtobufRequest } from '../../src/traces/ingest/otlp/wire/protobuf.js';
import { plainlyValid, validateTraces } from '../../src/traces/ingest/otlp/mapping/validate.js';
import { corpusDir } from '../support/otlp-corpus.js';

/**
 * The bridge's validation takes a span as it is only when the native span schema certainly
 * accepts it (plainlyValid); every other span is decided by the schema, with its reason.
 */

/** What the schema alone makes of a span: the stored span, or the reason it is turned away. */
function bySchema(span: Span) {
  const parsed = spanSchema.safeParse(repairLoneSurrogates(structuredClone(span)));
  if (parsed.success) return { span: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { reason: `${issue.path.map(String).join('.') || 'span'}: ${issue.message}` };
}

function byBridge(span: Span) {
  const rejections: SpanRejection[] = [];
  const [trace] = validateTraces([{ traceId: 'ab'.repeat(16), source: 'otel', spans: [structuredClone(span)] }], rejections);
  return trace ? { span: trace.spans[0] } : { reason: rejections[0]!.reason };
}

function corpusSpans(): Span[] {
  const spans: Span[] = [];
  for (const dir of readdirSync(corpusDir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const file of readdirSync(path.join(corpusDir, dir.name)).filter((f) => f.endsWith('.meta.json'))) {
      const meta = JSON.parse(readFileSync(path.join(corpusDir, dir.name, file), 'utf8')) as {
        path: string;
        contentType: string;
        contentEncoding: string | null;
      };
      if (!meta.path.endsWith('/v1/traces') || meta.contentEncoding) continue;
      const body = readFileSync(path.join(corpusDir, dir.name, file.replace('.meta.json', '.body')));
      const decoded = meta.contentType.includes('json')
        ? decodeJsonRequest(parseOtlpJson(body.toString('utf8')))
        : { ok: true as const, request: decodeProtobufRequest(body) };
      if (!decoded.ok) throw new Error(`${dir.name}/${file} does not decode`);
      for (const trace of normalizeExport(decoded.request).traces) spans.push(...trace.spans);
    }
  }
  return spans;
}

let benchTrace: NativeTrace | undefined;
const benchSpans = (): NativeTrace['spans'] =>
  (benchTrace ??= normalizeExport(decodeProtobufRequest(encodeProtobufRequest(exportRequest(1, 0)))).traces[0]!).spans;

describe('bridge validation', () => {
  it('takes every span of the corpus and the benchmark as it is, and the schema accepts each unchanged', () => {
    const spans = [...corpusSpans(), ...benchSpans()];
    expect(spans.length).toBeGreaterThan(40);
    for (const span of spans) {
      expect(plainlyValid(span), span.name).toBe(true);
      expect(bySchema(span)).toEqual({ span });
    }
  });

  const chat = () => structuredClone(benchSpans().find((s) => s.kind === 'llm.chat')!);
  const deep = (levels: number): unknown => (levels === 0 ? 'leaf' : { a: deep(levels - 1) });
  // Values the bridge can meet in attributes or make by mapping: each must go to the schema.
  const cases: Record<string, (span: Span) => void> = {
    'fractional tokens': (s) => (s.inputTokens = 1.5),
    'tokens past the limit': (s) => (s.totalTokens = 2e9),
    'negative cost': (s) => (s.costUsd = -1),
    'cost past the limit': (s) => (s.costUsd = 2e6),
    'infinite time to first token': (s) => (s.ttftMs = Number.POSITIVE_INFINITY),
    'empty model': (s) => (s.model = ''),
    'model past its length': (s) => (s.provider = 'p'.repeat(257)),
    'control character in a prompt name': (s) => (s.promptName = 'support\n'),
    'prompt version past its length': (s) => (s.promptVersion = 'v'.repeat(65)),
    'lone surrogate in a message': (s) => (s.input!.messages![0]!.content = 'broken \ud800 text'),
    'lone surrogate in an attribute key': (s) => (s.attributes = { 'k\udc00': 1 }),
    'lone surrogate in the name': (s) => (s.name = '\ud83d'),
    'attributes nested past the bound': (s) => (s.attributes = { deep: deep(40) }),
    'tool arguments that are a list': (s) =>
      (s.output!.toolCalls = [{ id: 'c', name: 't', arguments: [1] as unknown as Record<string, unknown> }]),
    'a role outside the four': (s) => (s.input!.messages![0]!.role = 'bot' as 'user'),
    'a year past 2099': (s) => (s.endTime = '2100-01-01T00:00:00.000000Z'),
    'an end before the start': (s) => (s.endTime = '2000-01-01T00:00:00.000000Z'),
    'a parent that is the span': (s) => (s.parentSpanId = s.spanId),
    'a non-plain object in metadata': (s) => (s.metadata = { at: new Date(0) as unknown as string }),
    'too many events': (s) => (s.events = Array.from({ length: 1001 }, () => ({ name: 'e', timestamp: s.startTime }))),
    'negative dropped events': (s) => (s.droppedEvents = -1),
  };

  it.each(Object.entries(cases))('%s: decided by the schema, as for a native span', (_name, change) => {
    const span = chat();
    change(span);
    expect(plainlyValid(span)).toBe(false);
    expect(byBridge(span)).toEqual(bySchema(span));
  });

  it('stores repaired text and refuses the rest with the schema reason', () => {
    const surrogate = chat();
    surrogate.input!.messages![0]!.content = 'broken \ud800 text';
    expect(byBridge(surrogate).span?.input?.messages?.[0]?.content).toBe('broken \ufffd text');
    const tokens = chat();
    tokens.inputTokens = 1.5;
    expect(byBridge(tokens).reason).toMatch(/^inputTokens: /);
  });
});
