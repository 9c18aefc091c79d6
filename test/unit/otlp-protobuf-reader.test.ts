import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportRequest } from '../../bench/otlp-data.js';
import { maxOtlpJsonDepth } from '../../src/traces/ingest/otlp/wire/json.js';
import { normalizeExport } from '../../src/traces/ingest/otlp/mapping/normalize.js';
import { decodeProtobufRequest, decodeWithProtobufjs, encodeProtobufRequest } from '../../src/traces/ingest/otlp/wire/protobuf.js';
import { readExportRequest } from '../../src/traces/ingest/otlp/wire/protobuf-reader.js';
import { corpusDir } from '../support/otlp-corpus.js';

/**
 * The direct protobuf reader against protobufjs (decode + toObject), the reference it follows:
 * the same plain request for every body it reads, and no answer (protobufjs decides) for
 * bodies outside what it is sure of.
 */

/** Plain requests compared as JSON: ids and bytes as hex, int64 values as their decimal text. */
const comparable = (request: unknown) =>
  JSON.parse(
    JSON.stringify(request, function (key, value: unknown) {
      const raw = (this as Record<string, unknown>)[key];
      if (raw instanceof Uint8Array) return { hex: Buffer.from(raw).toString('hex') };
      if (key === 'intValue') return String(value);
      if (typeof raw === 'number' && !Number.isFinite(raw)) return String(raw);
      return value;
    }),
  ) as unknown;

const readBoth = (body: Buffer) => {
  const direct = readExportRequest(body, maxOtlpJsonDepth);
  expect(direct).toBeDefined();
  expect(comparable(direct)).toEqual(comparable(decodeWithProtobufjs(body)));
  return direct!;
};

const str = (v: string) => ({ stringValue: v });
const traceId = Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex');
const spanId = Buffer.from('b7ad6b7169203331', 'hex');

describe('direct protobuf reader', () => {
  it('reads every protobuf trace export of the corpus as protobufjs does', () => {
    let read = 0;
    for (const dir of readdirSync(corpusDir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      for (const file of readdirSync(path.join(corpusDir, dir.name)).filter((f) => f.endsWith('.meta.json'))) {
        const meta = JSON.parse(readFileSync(path.join(corpusDir, dir.name, file), 'utf8')) as {
          path: string;
          contentType: string;
          contentEncoding: string | null;
        };
        if (!meta.path.endsWith('/v1/traces') || meta.contentType.includes('json') || meta.contentEncoding) continue;
        readBoth(readFileSync(path.join(corpusDir, dir.name, file.replace('.meta.json', '.body'))));
        read++;
      }
    }
    expect(read).toBeGreaterThan(2);
  });

  it('reads the benchmark export as protobufjs does', () => {
    const direct = readBoth(encodeProtobufRequest(exportRequest(1, 3)));
    expect(normalizeExport(direct).traces).toHaveLength(64);
  });

  it('reads every field and value shape: ints beyond 2^53 and negative, doubles, bytes, nested lists, links, events, status, flags', () => {
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: str('svc') }], droppedAttributesCount: 2 },
          schemaUrl: 'https://opentelemetry.io/schemas/1.26.0',
          scopeSpans: [
            {
              scope: { name: 'lib', version: '1.2', attributes: [{ key: 'a', value: { boolValue: true } }], droppedAttributesCount: 1 },
              schemaUrl: 'x',
              spans: [
                {
                  traceId,
                  spanId,
                  parentSpanId: Buffer.from('00f067aa0ba902b7', 'hex'),
                  traceState: 'k=v',
                  flags: 0x301,
                  name: 'ünïcödé 😀',
                  kind: 3,
                  startTimeUnixNano: '18446744073709551615',
                  endTimeUnixNano: '1735689601000000000',
                  attributes: [
                    { key: 'big', value: { intValue: '9223372036854775807' } },
                    { key: 'min', value: { intValue: '-9223372036854775808' } },
                    { key: 'neg', value: { intValue: -42 } },
                    { key: 'edge', value: { intValue: '9007199254740993' } },
                    { key: 'zero', value: { intValue: 0 } },
                    { key: 'd', value: { doubleValue: -0.5 } },
                    { key: 'nan', value: { doubleValue: Number.NaN } },
                    { key: 'inf', value: { doubleValue: Number.POSITIVE_INFINITY } },
                    { key: 'f', value: { boolValue: false } },
                    { key: 'empty', value: {} },
                    { key: 'nothing' },
                    { key: 'bytes', value: { bytesValue: Buffer.from([0, 1, 255]) } },
                    { key: 'emptyArray', value: { arrayValue: {} } },
                    { key: 'emptyList', value: { kvlistValue: {} } },
                    {
                      key: 'nested',
                      value: {
                        kvlistValue: {
                          values: [
                            {
                              key: 'x',
                              value: {
                                arrayValue: {
                                  values: [{ intValue: 1 }, str('y'), { kvlistValue: { values: [{ key: 'z', value: str('') }] } }],
                                },
                              },
                            },
                          ],
                        },
                      },
                    },
                  ],
                  droppedAttributesCount: 4,
                  events: [
                    {
                      timeUnixNano: '1735689600500000000',
                      name: 'e',
                      attributes: [{ key: 'k', value: str('v') }],
                      droppedAttributesCount: 1,
                    },
                    {},
                  ],
                  droppedEventsCount: 7,
                  links: [
                    {
                      traceId,
                      spanId,
                      traceState: 's',
                      attributes: [{ key: 'l', value: { intValue: 3 } }],
                      droppedAttributesCount: 2,
                      flags: 1,
                    },
                  ],
                  droppedLinksCount: 1,
                  status: { code: 2, message: 'failed' },
                },
                { traceId, spanId, kind: -1, status: {} },
              ],
            },
            {},
          ],
        },
        {},
      ],
    };
    readBoth(encodeProtobufRequest(request));
    readBoth(encodeProtobufRequest({}));
    readBoth(Buffer.alloc(0));
  });

  it('skips fields it does not know (a newer schema), as protobufjs does', () => {
    const base = encodeProtobufRequest({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId, spanId, name: 'n' }] }] }] });
    // Field 99 of every wire type the reader skips, appended to the request.
    const extra = Buffer.from([0x98, 0x06, 0x05, 0x99, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, 0x9a, 0x06, 0x02, 0x61, 0x62, 0x9d, 0x06, 1, 2, 3, 4]);
    readBoth(Buffer.concat([base, extra]));
  });

  it('leaves to protobufjs what it is not sure of, and protobufjs answers as before', () => {
    const request = (value: object) =>
      encodeProtobufRequest({
        resourceSpans: [{ scopeSpans: [{ spans: [{ traceId, spanId, name: 'n', attributes: [{ key: 'k', value }] }] }] }],
      });
    // Truncated, invalid UTF-8, a wrong wire type and a group are given up on.
    const body = request(str('text'));
    expect(readExportRequest(body.subarray(0, body.length - 2), maxOtlpJsonDepth)).toBeUndefined();
    const invalid = Buffer.from(body);
    invalid[invalid.indexOf('text')] = 0xff;
    expect(readExportRequest(invalid, maxOtlpJsonDepth)).toBeUndefined();
    expect(() => decodeProtobufRequest(invalid)).toThrow(/not a protobuf/);
    expect(readExportRequest(Buffer.from([0x08, 0x01]), maxOtlpJsonDepth)).toBeUndefined();
    expect(readExportRequest(Buffer.from([0x0b, 0x0c]), maxOtlpJsonDepth)).toBeUndefined();
    // Values nested near the bound: protobufjs decides; at the bound it accepts, past it it refuses with the path.
    const nest = (levels: number) => {
      let value: object = str('x');
      for (let i = 0; i < levels; i++) value = { arrayValue: { values: [value] } };
      return request(value);
    };
    // A span attribute's value is the 10th container of the plain request; each list adds 3.
    expect(readExportRequest(nest(42), maxOtlpJsonDepth)).toBeUndefined();
    expect(comparable(decodeProtobufRequest(nest(42)))).toEqual(comparable(decodeWithProtobufjs(nest(42))));
    expect(() => decodeProtobufRequest(nest(43))).toThrow(
      /resourceSpans\.0\.scopeSpans\.0\.spans\.0\.attributes\.0\.value.* nests deeper than 136/,
    );
    readBoth(nest(20));
  });
});
