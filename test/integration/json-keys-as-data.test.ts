import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProtobufRequest } from '../../src/traces/ingest/otlp/wire/protobuf.js';
import { createTestContext, type Tenant, type TestContext } from '../support/app.js';

/**
 * `__proto__` and `constructor.prototype` are legal JSON keys: a body holding them is stored
 * and read back exactly, natively and through OTLP (JSON and protobuf), and no prototype is
 * ever touched. Bodies are written as JSON text, since an object literal's `__proto__` would
 * set its prototype rather than make a key.
 */

let ctx: TestContext;
let tenant: Tenant;
beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
});
afterAll(async () => {
  await ctx?.close();
});

const postText = (url: string, text: string) =>
  ctx.app.inject({ method: 'POST', url, headers: { ...tenant.headers, 'content-type': 'application/json' }, payload: text });
const get = (url: string) => ctx.app.inject({ method: 'GET', url, headers: tenant.headers });

/** A JSON object, as text, with the keys of prototype pollution at its top and inside. */
const hostile =
  '{"__proto__":{"polluted":"proto","nested":{"__proto__":{"deep":1}}},' +
  '"constructor":{"prototype":{"polluted":"constructor"}},"plain":"kept","list":[{"__proto__":"in a list"}]}';

/** JSON text of a value with every object's keys sorted, `__proto__` read as the own key it is. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${sortedJson(record[key])}`)
    .join(',')}}`;
}

function expectNoPollution() {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(({} as Record<string, unknown>).deep).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty('polluted');
}

describe('native ingest', () => {
  it('stores attributes, metadata, event attributes and document metadata holding __proto__ and constructor keys as sent', async () => {
    const span =
      '{"spanId":"root","name":"root","kind":"llm.chat","startTime":"2026-05-01T10:00:00.000Z","endTime":"2026-05-01T10:00:01.000Z",' +
      `"durationMs":1000,"status":"ok","attributes":${hostile},"metadata":${hostile},` +
      `"events":[{"name":"e","timestamp":"2026-05-01T10:00:00.500Z","attributes":${hostile}}],` +
      `"input":{"documents":[{"content":"d","metadata":${hostile}}],"toolCalls":[{"id":"c","name":"t","arguments":${hostile}}]}}`;
    const res = await postText('/api/traces', `{"traces":[{"traceId":"proto-keys","source":"sdk","spans":[${span}]}]}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ accepted: 1, rejected: 0 });
    expectNoPollution();

    const read = await get('/api/traces/proto-keys');
    expect(read.statusCode, read.body).toBe(200);
    // The answer's text holds the keys as sent; parsed, they are own keys with the same values.
    const stored = JSON.parse(read.body).data.spans[0];
    const expected = JSON.stringify(JSON.parse(hostile));
    expect(JSON.stringify(stored.attributes)).toBe(expected);
    expect(JSON.stringify(stored.metadata)).toBe(expected);
    expect(JSON.stringify(stored.events[0].attributes)).toBe(expected);
    expect(JSON.stringify(stored.input.documents[0].metadata)).toBe(expected);
    expect(JSON.stringify(stored.input.toolCalls[0].arguments)).toBe(expected);
    expect(Object.keys(stored.attributes)).toEqual(['__proto__', 'constructor', 'plain', 'list']);
    expect(Object.getPrototypeOf(stored.attributes)).toBe(Object.prototype);
    expectNoPollution();
  });

  it('keeps a prompt whose metadata holds __proto__ and constructor keys', async () => {
    const res = await postText('/api/prompt', `{"name":"proto-keys","systemPrompt":"s","metadata":${hostile}}`);
    expect(res.statusCode, res.body).toBe(201);
    const read = await get(`/api/prompt/${res.json().data.id}`);
    expect(read.statusCode, read.body).toBe(200);
    // PostgreSQL's jsonb orders keys its own way: compared with keys sorted.
    expect(sortedJson(JSON.parse(read.body).data.metadata)).toBe(sortedJson(JSON.parse(hostile)));
    expectNoPollution();
  });
});

const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');
/** An OTLP span whose attributes are keyed `__proto__` (a key-value list, then a string) and `constructor`. */
function otlpRequest(traceNumber: number, protoValue: unknown, encoding: 'json' | 'protobuf' = 'json') {
  // Ids are hex text in OTLP/JSON, bytes in protobuf.
  const id = (n: number, bytes: number) => (encoding === 'json' ? hex(n, bytes) : Buffer.from(hex(n, bytes), 'hex'));
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
        scopeSpans: [
          {
            scope: { name: 'scope' },
            spans: [
              {
                traceId: id(traceNumber, 16),
                spanId: id(1, 8),
                name: 'root',
                kind: 1,
                startTimeUnixNano: '1735689600000000000',
                endTimeUnixNano: '1735689601000000000',
                attributes: [
                  { key: '__proto__', value: protoValue },
                  { key: 'constructor', value: { kvlistValue: { values: [{ key: 'prototype', value: { stringValue: 'p' } }] } } },
                  { key: 'plain', value: { stringValue: 'kept' } },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}
const kvlist = { kvlistValue: { values: [{ key: 'polluted', value: { stringValue: 'otlp' } }] } };

async function readAttributes(traceNumber: number) {
  const read = await get(`/api/traces/${hex(traceNumber, 16)}`);
  expect(read.statusCode, read.body).toBe(200);
  return JSON.parse(read.body).data.spans[0].attributes as Record<string, unknown>;
}

describe('OTLP attribute keyed __proto__', () => {
  it.each([
    ['a key-value list', 1, kvlist, '{"__proto__":{"polluted":"otlp"},"constructor":{"prototype":"p"},"plain":"kept"}'],
    ['a string', 2, { stringValue: 'text' }, '{"__proto__":"text","constructor":{"prototype":"p"},"plain":"kept"}'],
  ])('keeps %s value under its key through OTLP/JSON', async (_what, traceNumber, value, expected) => {
    const res = await postText('/api/traces/otlp', JSON.stringify(otlpRequest(traceNumber, value)));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ accepted: 1, rejected: 0 });
    const attributes = await readAttributes(traceNumber);
    expect(JSON.stringify(attributes)).toBe(expected);
    expect(Object.keys(attributes)).not.toContain('polluted');
    expectNoPollution();
  });

  it.each([
    ['a key-value list', 3, kvlist, '{"__proto__":{"polluted":"otlp"},"constructor":{"prototype":"p"},"plain":"kept"}'],
    ['a string', 4, { stringValue: 'text' }, '{"__proto__":"text","constructor":{"prototype":"p"},"plain":"kept"}'],
  ])('keeps %s value under its key through OTLP/protobuf', async (_what, traceNumber, value, expected) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/traces/otlp',
      headers: { ...tenant.headers, 'content-type': 'application/x-protobuf' },
      payload: encodeProtobufRequest(otlpRequest(traceNumber, value, 'protobuf')),
    });
    expect(res.statusCode, res.body).toBe(200);
    const attributes = await readAttributes(traceNumber);
    expect(JSON.stringify(attributes)).toBe(expected);
    expectNoPollution();
  });
});
