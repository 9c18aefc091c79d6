import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';
import { getJson } from './scores-fixtures.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const traceId = '0af7651916cd43dd8448eb211c80319c';
const spanId = 'b7ad6b7169203331';
const attribute = (key: string, value: object) => ({ key, value });
const now = BigInt(Date.now()) * 1_000_000n;

const exportWith = (events: object[]) => ({
  resourceSpans: [
    {
      resource: { attributes: [attribute('service.name', { stringValue: 'svc' })] },
      scopeSpans: [
        {
          scope: { name: 'test' },
          spans: [
            {
              traceId,
              spanId,
              name: 'chat',
              kind: 3,
              startTimeUnixNano: String(now - 1_000_000_000n),
              endTimeUnixNano: String(now),
              attributes: [attribute('gen_ai.operation.name', { stringValue: 'chat' })],
              events,
            },
          ],
        },
      ],
    },
  ],
});

describe('the OpenTelemetry evaluation event', () => {
  it('becomes a score with source otel on its span; a re-sent export corrects it', async () => {
    const tenant = await ctx.tenant();
    const event = (value: number) => ({
      name: 'gen_ai.evaluation.result',
      timeUnixNano: String(now),
      attributes: [
        attribute('gen_ai.evaluation.name', { stringValue: 'relevance' }),
        attribute('gen_ai.evaluation.score.value', { doubleValue: value }),
        attribute('gen_ai.evaluation.score.label', { stringValue: 'relevant' }),
        attribute('gen_ai.evaluation.explanation', { stringValue: 'answers the question' }),
      ],
    });
    const labelOnly = {
      name: 'gen_ai.evaluation.result',
      timeUnixNano: String(now + 1n),
      attributes: [
        attribute('gen_ai.evaluation.name', { stringValue: 'tone' }),
        attribute('gen_ai.evaluation.score.label', { stringValue: 'polite' }),
      ],
    };
    const send = (events: object[]) =>
      ctx.app.inject({ method: 'POST', url: '/api/traces/otlp', headers: tenant.headers, payload: exportWith(events) });
    expect((await send([event(0.4), labelOnly, { name: 'other', timeUnixNano: String(now) }])).statusCode).toBe(200);
    expect((await send([event(0.9), labelOnly])).statusCode).toBe(200);
    const scores = (await getJson(ctx, tenant, `/api/scores?traceId=${traceId}`)).json().data;
    const byName = Object.fromEntries(scores.map((s: { name: string }) => [s.name, s]));
    expect(scores).toHaveLength(2);
    expect(byName.relevance).toMatchObject({
      dataType: 'numeric',
      value: 0.9,
      comment: 'answers the question',
      metadata: { label: 'relevant' },
      source: 'otel',
      traceId,
      spanId,
    });
    expect(byName.tone).toMatchObject({ dataType: 'categorical', stringValue: 'polite', source: 'otel', spanId });
    const detail = (await getJson(ctx, tenant, `/api/traces/${traceId}`)).json().data;
    expect(detail.spans[0].scores.map((s: { name: string }) => s.name).sort()).toEqual(['relevance', 'tone']);
  });
});

describe('the OpenTelemetry evaluation event as a log record', () => {
  const logsWith = (records: object[]) => ({
    resourceLogs: [
      {
        resource: { attributes: [attribute('service.name', { stringValue: 'svc' })] },
        scopeLogs: [{ scope: { name: 'evals' }, logRecords: records }],
      },
    ],
  });
  const evaluationRecord = (ids: { traceId?: string; spanId?: string }, value: number, at: bigint, viaAttribute = false) => ({
    timeUnixNano: String(at),
    ...(viaAttribute ? {} : { eventName: 'gen_ai.evaluation.result' }),
    ...ids,
    attributes: [
      ...(viaAttribute ? [attribute('event.name', { stringValue: 'gen_ai.evaluation.result' })] : []),
      attribute('gen_ai.evaluation.name', { stringValue: 'faithfulness' }),
      attribute('gen_ai.evaluation.score.value', { doubleValue: value }),
      attribute('gen_ai.evaluation.explanation', { stringValue: 'cites the sources' }),
    ],
  });

  it('becomes a score with source otel on the span it names, before or after the span; a re-sent export corrects it', async () => {
    const tenant = await ctx.tenant();
    const logTrace = '1af7651916cd43dd8448eb211c80319c';
    const send = (records: object[]) =>
      ctx.app.inject({ method: 'POST', url: '/api/traces/otlp/v1/logs', headers: tenant.headers, payload: logsWith(records) });
    // The evaluation arrives before its span: kept, joined when the span lands.
    const first = await send([evaluationRecord({ traceId: logTrace, spanId }, 0.5, now), evaluationRecord({}, 0.1, now)]);
    expect(first.statusCode).toBe(200);
    // Taken as a score, not counted as rejected; the one naming no span is.
    expect(first.json()).toMatchObject({ partialSuccess: { rejectedLogRecords: 1 }, data: { rejected: 1 } });
    expect((await send([evaluationRecord({ traceId: logTrace, spanId }, 0.75, now)])).statusCode).toBe(200);
    // An older SDK names the event in the `event.name` attribute.
    expect((await send([evaluationRecord({ traceId: logTrace, spanId }, 1, now + 5n, true)])).statusCode).toBe(200);
    const spans = { ...exportWith([]) };
    spans.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.traceId = logTrace;
    expect((await ctx.app.inject({ method: 'POST', url: '/api/traces/otlp', headers: tenant.headers, payload: spans })).statusCode).toBe(
      200,
    );

    const scores = (await getJson(ctx, tenant, `/api/scores?traceId=${logTrace}`)).json().data;
    expect(scores.map((s: { value: number }) => s.value).sort()).toEqual([0.75, 1]);
    expect(scores[0]).toMatchObject({
      name: 'faithfulness',
      dataType: 'numeric',
      comment: 'cites the sources',
      source: 'otel',
      traceId: logTrace,
      spanId,
    });
    const detail = (await getJson(ctx, tenant, `/api/traces/${logTrace}`)).json().data;
    expect(detail.spans[0].scores).toHaveLength(2);
  });
});
