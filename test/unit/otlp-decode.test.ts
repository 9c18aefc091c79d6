import { describe, expect, it } from 'vitest';
import { fromAnyValue, fromKeyValues } from '../../src/traces/ingest/otlp/wire/any-value.js';
import { decodeJsonLogsRequest, decodeJsonRequest, parseOtlpJson } from '../../src/traces/ingest/otlp/wire/json.js';
import { normalizeExport, parseUnixNanos, toHexId, unixNanosToIso } from '../../src/traces/ingest/otlp/mapping/normalize.js';
import {
  decodeProtobufRequest,
  decodeProtobufResponse,
  encodeProtobufRequest,
  encodeProtobufResponse,
} from '../../src/traces/ingest/otlp/wire/protobuf.js';

describe('times', () => {
  it('keeps microseconds of unix nanoseconds', () => {
    const iso = (v: string | number) => unixNanosToIso(parseUnixNanos(v)!);
    expect(iso('1735689600123456789')).toBe('2025-01-01T00:00:00.123456Z');
    expect(iso('1735689600000000999')).toBe('2025-01-01T00:00:00.000000Z');
    expect(iso('1735689601999999999')).toBe('2025-01-01T00:00:01.999999Z');
    expect(iso(1000)).toBe('1970-01-01T00:00:00.000001Z');
    expect(iso(1735689600123456800)).toBe('2025-01-01T00:00:00.123456Z');
  });
  it('treats zero, negative, malformed and past-9999 times as missing', () => {
    for (const v of ['0', 0, '-5', -5, '12a', '', 1.5, '253402300800000000000']) expect(parseUnixNanos(v)).toBeUndefined();
    expect(parseUnixNanos(undefined)).toBeUndefined();
    expect(parseUnixNanos('253402300799999999999')).toEqual({ seconds: 253402300799, nanos: 999999999 });
  });
  it('reads int64 JSON numbers beyond 2^53 without rounding, and leaves strings alone', () => {
    const parsed = parseOtlpJson(
      '{"startTimeUnixNano": 1735689600123456789, "x": {"intValue":9007199254740993}, "s": "\\"intValue\\":12345678901234567"}',
    ) as Record<string, unknown>;
    expect(parsed.startTimeUnixNano).toBe('1735689600123456789');
    expect(parsed.x).toEqual({ intValue: '9007199254740993' });
    expect(parsed.s).toBe('"intValue":12345678901234567');
  });
});

describe('ids', () => {
  it('takes hex (either case) and base64, refuses wrong lengths and zeros', () => {
    expect(toHexId('0102030405060708090A0B0C0D0E0F10', 16)).toBe('0102030405060708090a0b0c0d0e0f10');
    expect(toHexId(Buffer.from('0102030405060708', 'hex').toString('base64'), 8)).toBe('0102030405060708');
    expect(toHexId(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 8)).toBe('0102030405060708');
    expect(toHexId('', 8)).toBe('');
    expect(toHexId(undefined, 8)).toBe('');
    expect(toHexId('0000000000000000', 8)).toBeUndefined();
    expect(toHexId('abc', 8)).toBeUndefined();
    expect(toHexId('zz02030405060708', 8)).toBeUndefined();
  });
});

describe('AnyValue', () => {
  it('unwraps every shape', () => {
    expect(
      fromKeyValues([
        { key: 's', value: { stringValue: 'x' } },
        { key: 'b', value: { boolValue: false } },
        { key: 'i', value: { intValue: '42' } },
        { key: 'big', value: { intValue: '9223372036854775807' } },
        { key: 'd', value: { doubleValue: 0.5 } },
        { key: 'nan', value: { doubleValue: 'NaN' } },
        { key: 'a', value: { arrayValue: { values: [{ intValue: 1 }, { stringValue: 'y' }] } } },
        { key: 'kv', value: { kvlistValue: { values: [{ key: 'k', value: { boolValue: true } }] } } },
        { key: 'bytes', value: { bytesValue: new Uint8Array([1, 2, 3]) } },
        { key: 'empty', value: {} },
        { key: 'none' },
      ]),
    ).toEqual({
      s: 'x',
      b: false,
      i: 42,
      big: '9223372036854775807',
      d: 0.5,
      nan: 'NaN',
      a: [1, 'y'],
      kv: { k: true },
      bytes: 'AQID',
      empty: null,
      none: null,
    });
    expect(fromAnyValue({ arrayValue: {} })).toEqual([]);
  });
});

describe('JSON decoding', () => {
  it('refuses what is not an ExportTraceServiceRequest', () => {
    expect(decodeJsonRequest([]).ok).toBe(false);
    expect(decodeJsonRequest({ traces: [] }).ok).toBe(false);
    expect(decodeJsonRequest({ resourceSpans: [], extra: 1 }).ok).toBe(false);
    expect(decodeJsonRequest({ resourceSpans: [{ scopeSpans: [{ spans: [{ startTimeUnixNano: 'soon' }] }] }] })).toMatchObject({
      ok: false,
      issues: [{ path: 'body.resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano' }],
    });
    expect(decodeJsonRequest({ resourceSpans: [] }).ok).toBe(true);
  });

  it('refuses a logs request nested deeper than any real export with its path, as a traces request', () => {
    // A log body of kvlist values nested 60 deep: 4 levels each, past the bound of 136.
    let value: unknown = { stringValue: 'bottom' };
    for (let i = 0; i < 60; i++) value = { kvlistValue: { values: [{ key: 'k', value }] } };
    const logs = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: value }] }] }] };
    const decoded = decodeJsonLogsRequest(logs);
    expect(decoded.ok).toBe(false);
    expect(decoded.ok ? [] : decoded.issues[0]!.path).toMatch(/^body\.resourceLogs\.0\.scopeLogs\.0\.logRecords\.0\.body\.kvlistValue/);
    expect(decodeJsonLogsRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'x' } }] }] }] }).ok).toBe(true);
    expect(decodeJsonLogsRequest({ resourceSpans: [] })).toMatchObject({
      ok: false,
      issues: [{ path: 'body', message: 'is not an ExportLogsServiceRequest: expected {"resourceLogs": [...]}' }],
    });
  });
});

describe('protobuf', () => {
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
        scopeSpans: [
          {
            scope: { name: 'lib', version: '2.0.0' },
            spans: [
              {
                traceId: Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex'),
                spanId: Buffer.from('0102030405060708', 'hex'),
                parentSpanId: Buffer.from('1112131415161718', 'hex'),
                name: 'call',
                kind: 3,
                startTimeUnixNano: '1735689600123456789',
                endTimeUnixNano: '1735689600223456789',
                attributes: [{ key: 'gen_ai.usage.input_tokens', value: { intValue: '5' } }],
                events: [{ timeUnixNano: '1735689600200000000', name: 'e' }],
                links: [{ traceId: Buffer.alloc(16, 2), spanId: Buffer.alloc(8, 3) }],
                status: { code: 2, message: 'bad' },
              },
            ],
          },
        ],
      },
    ],
  };

  it('decodes an exporter request into native spans with nothing rounded', () => {
    const { traces, rejections, spanCount } = normalizeExport(decodeProtobufRequest(encodeProtobufRequest(request)));
    expect(rejections).toEqual([]);
    expect(spanCount).toBe(1);
    expect(traces).toHaveLength(1);
    const [span] = traces[0]!.spans;
    expect(span).toMatchObject({
      spanId: '0102030405060708',
      parentSpanId: '1112131415161718',
      startTime: '2025-01-01T00:00:00.123456Z',
      endTime: '2025-01-01T00:00:00.223456Z',
      durationMs: 100,
      inputTokens: 5,
      status: 'error',
      statusMessage: 'bad',
      events: [{ name: 'e', timestamp: '2025-01-01T00:00:00.200000Z' }],
      metadata: {
        resource: { 'service.name': 'svc' },
        scope: { name: 'lib', version: '2.0.0' },
        otel: { spanKind: 'client', links: [{ traceId: '02'.repeat(16), spanId: '03'.repeat(8), attributes: {} }] },
      },
    });
    expect(traces[0]!.name).toBeUndefined();
  });

  it('rejects spans with bad ids or missing times, keeps one copy of a repeated span', () => {
    const base = request.resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    const spans = [
      { ...base, parentSpanId: undefined },
      { ...base, parentSpanId: undefined, name: 'again' },
      { ...base, spanId: Buffer.alloc(4, 1) },
      { ...base, traceId: Buffer.alloc(16, 0) },
      { ...base, startTimeUnixNano: undefined },
      { ...base, endTimeUnixNano: '1' },
    ];
    const body = { resourceSpans: [{ scopeSpans: [{ spans }] }] };
    const { traces, rejections, spanCount } = normalizeExport(decodeProtobufRequest(encodeProtobufRequest(body)));
    expect(spanCount).toBe(6);
    expect(traces[0]!.spans.map((s) => s.name)).toEqual(['again']);
    expect(traces[0]!.name).toBe('again');
    expect(rejections.map((r) => r.reason)).toEqual([
      expect.stringMatching(/spanId/),
      expect.stringMatching(/traceId/),
      expect.stringMatching(/startTimeUnixNano/),
      expect.stringMatching(/before startTimeUnixNano/),
    ]);
  });

  it('encodes the response: empty on full success, partial success otherwise', () => {
    expect(encodeProtobufResponse(0, '').length).toBe(0);
    expect(decodeProtobufResponse(encodeProtobufResponse(3, 'why'))).toEqual({ partialSuccess: { rejectedSpans: 3, errorMessage: 'why' } });
  });

  it('reports bytes that are not protobuf', () => {
    expect(() => decodeProtobufRequest(Buffer.from([0x0a, 0xff, 0xff]))).toThrow(/not a protobuf/);
  });
});
