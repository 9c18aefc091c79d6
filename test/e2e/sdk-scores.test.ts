import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Loupe, type LoupeError } from '../../packages/sdk/src/index.js';
import { startListeningService, type ListeningService } from './sdk-server.js';

let service: ListeningService;
beforeAll(async () => {
  service = await startListeningService();
});
afterAll(async () => {
  await service?.close();
});

function client(options: { batchSize?: number } = {}) {
  const errors: LoupeError[] = [];
  const loupe = new Loupe({
    apiKey: service.apiKey,
    baseUrl: service.baseUrl,
    environment: 'development',
    env: {},
    onError: (e) => errors.push(e),
    ...options,
  });
  return { loupe, errors };
}

describe('SDK scores against the listening service', () => {
  it('span.score and loupe.score land on the span, the trace and the session, source sdk', async () => {
    const { loupe, errors } = client();
    const { traceId, spanId } = await loupe.withSpan('agent', { kind: 'agent', sessionId: 'sess-sdk-scores' }, async (root) => {
      return loupe.withSpan('chat', { kind: 'llm.chat' }, async (span) => {
        span.score('helpfulness', 0.75, { comment: 'mostly right' });
        return { traceId: root.traceId, spanId: span.spanId };
      });
    });
    const correctId = loupe.score({ traceId, name: 'correct', value: true });
    loupe.score({ sessionId: 'sess-sdk-scores', name: 'tone', value: 'friendly' });
    await loupe.shutdown();
    expect(errors).toEqual([]);
    expect(loupe.stats().scores).toEqual({ queued: 0, sent: 3, rejected: 0, dropped: 0 });

    const trace = await service.call('GET', `/api/traces/${traceId}`);
    expect(trace.status).toBe(200);
    expect(trace.body.data.scores).toEqual([
      expect.objectContaining({ id: correctId, name: 'correct', dataType: 'boolean', value: 1, source: 'sdk' }),
    ]);
    const chat = trace.body.data.spans.find((s: { name: string }) => s.name === 'chat');
    expect(chat.scores).toEqual([
      expect.objectContaining({
        name: 'helpfulness',
        value: 0.75,
        comment: 'mostly right',
        source: 'sdk',
        spanId,
        traceId,
      }),
    ]);
    const listed = await service.call('GET', `/api/scores?spanId=${spanId}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ name: 'helpfulness', environment: 'development', source: 'sdk' })]);
    const session = await service.call('GET', '/api/scores?sessionId=sess-sdk-scores&name=tone');
    expect(session.body.data).toEqual([expect.objectContaining({ dataType: 'categorical', stringValue: 'friendly', source: 'sdk' })]);
  });

  it('a score the service refuses goes to onError; the rest of its batch is stored', async () => {
    const config = await service.call('POST', '/api/score-configs', { name: 'stars-sdk', dataType: 'numeric', min: 1, max: 5 });
    expect(config.status).toBe(201);
    const { loupe, errors } = client();
    const good = loupe.score({ traceId: 'trace-sdk-refused', name: 'stars-sdk', value: 4 });
    loupe.score({ traceId: 'trace-sdk-refused', name: 'stars-sdk', value: 9 });
    await loupe.shutdown();
    expect(loupe.stats().scores).toMatchObject({ sent: 1, rejected: 1 });
    expect(errors).toHaveLength(1);
    expect(errors[0]!.kind).toBe('rejected');
    expect(errors[0]!.message).toMatch(/scores\.1\.value/);
    const stored = await service.call('GET', '/api/scores?traceId=trace-sdk-refused');
    expect(stored.body.data.map((s: { id: string }) => s.id)).toEqual([good]);
  });

  it('re-sending a score id corrects it instead of adding one', async () => {
    const { loupe } = client();
    const id = loupe.score({ traceId: 'trace-sdk-correct', name: 'quality', value: 2 });
    await loupe.flush();
    loupe.score({ id, traceId: 'trace-sdk-correct', name: 'quality', value: 3 });
    await loupe.shutdown();
    const stored = await service.call('GET', '/api/scores?traceId=trace-sdk-correct');
    expect(stored.body.data).toEqual([expect.objectContaining({ id, value: 3 })]);
  });
});
