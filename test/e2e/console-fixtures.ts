/** Traces and prompts the console tests seed through the API: figures the screens must show. */

const minute = 60_000;

function iso(ms: number) {
  return new Date(ms).toISOString();
}

/** A support agent: retrieval with documents, a chat call with a tool call, the tool, a final chat. */
export function agentTrace(traceId: string, start: number, options: { environment?: string; error?: boolean; sessionId?: string } = {}) {
  const t = (ms: number) => iso(start + ms);
  return {
    traceId,
    name: options.error ? 'refund agent' : 'support agent',
    sessionId: options.sessionId ?? 'conv-1',
    source: 'sdk',
    environment: options.environment ?? 'production',
    service: 'helpdesk-api',
    userId: 'user-7',
    tags: ['support', 'beta'],
    spans: [
      {
        spanId: `${traceId}-root`,
        name: 'support-agent',
        kind: 'agent',
        startTime: t(0),
        endTime: t(2400),
        durationMs: 2400,
        status: options.error ? 'error' : 'ok',
        ...(options.error ? { statusMessage: 'refund API timed out' } : {}),
        input: { raw: { question: 'Is my kettle under warranty?' } },
        attributes: { 'app.tier': 'gold' },
        metadata: { release: '2025.06' },
        events: [{ name: 'context.compacted', timestamp: t(1200), attributes: { tokensBefore: 9000 } }],
      },
      {
        spanId: `${traceId}-search`,
        parentSpanId: `${traceId}-root`,
        name: 'search docs',
        kind: 'retrieval',
        startTime: t(20),
        endTime: t(320),
        durationMs: 300,
        status: 'ok',
        output: {
          documents: [
            { content: 'Kettles carry a two-year warranty.', score: 0.92, metadata: { source: 'warranty.md' } },
            { content: 'Returns within 30 days.', score: 0.41 },
          ],
        },
      },
      {
        spanId: `${traceId}-chat`,
        parentSpanId: `${traceId}-root`,
        name: 'chat',
        kind: 'llm.chat',
        startTime: t(340),
        endTime: t(1340),
        durationMs: 1000,
        status: 'ok',
        model: 'gpt-4o-mini',
        provider: 'openai',
        inputTokens: 400,
        outputTokens: 100,
        totalTokens: 500,
        costUsd: 0.0021,
        input: {
          messages: [
            { role: 'system', content: 'You answer warranty questions.' },
            { role: 'user', content: 'Is my kettle under warranty?' },
          ],
        },
        output: {
          messages: [{ role: 'assistant', content: 'Let me check your order.' }],
          toolCalls: [{ id: 'call_1', name: 'lookup_order', arguments: { orderId: 'A-17' }, result: { purchased: '2024-11-02' } }],
        },
        ttftMs: 210,
        cacheReadTokens: 120,
      },
      {
        spanId: `${traceId}-tool`,
        parentSpanId: `${traceId}-chat`,
        name: 'lookup_order',
        kind: 'tool',
        startTime: t(1350),
        endTime: t(1650),
        durationMs: 300,
        status: options.error ? 'error' : 'ok',
        input: { raw: { orderId: 'A-17' } },
        output: { raw: { purchased: '2024-11-02' } },
      },
      {
        spanId: `${traceId}-final`,
        parentSpanId: `${traceId}-root`,
        name: 'answer',
        kind: 'llm.chat',
        startTime: t(1700),
        endTime: t(2380),
        durationMs: 680,
        status: 'ok',
        model: 'claude-sonnet',
        provider: 'anthropic',
        inputTokens: 620,
        outputTokens: 80,
        totalTokens: 700,
        costUsd: 0.0042,
        input: {
          messages: [
            { role: 'user', content: 'Is my kettle under warranty?' },
            { role: 'tool', content: '{"purchased":"2024-11-02"}', toolCallId: 'call_1' },
          ],
        },
        output: { messages: [{ role: 'assistant', content: 'Yes: it is covered until November 2026.' }] },
      },
    ],
  };
}

/** What a chat step of an agent says: about 1.2 KB in, 0.4 KB out, with the step's number. */
function chatPayloads(i: number) {
  const policy = 'You are a support agent for a kitchen appliance shop. Answer from the order history and the warranty terms only. '.repeat(
    4,
  );
  return {
    input: {
      messages: [
        { role: 'system', content: policy },
        {
          role: 'user',
          content: `Step ${i}: is the kettle of order A-${i} still under warranty, and can it be replaced rather than repaired?`,
        },
        { role: 'assistant', content: 'Let me look up the order and the warranty terms for that model before answering.' },
        {
          role: 'tool',
          content: JSON.stringify({ orderId: `A-${i}`, purchased: '2024-11-02', model: 'K-200', warrantyMonths: 24 }),
          toolCallId: `call-${i}`,
        },
      ],
    },
    output: {
      messages: [
        {
          role: 'assistant',
          content: `Order A-${i} was bought on 2 November 2024 and the K-200 carries a two-year warranty, so it is covered until November 2026. A replacement is offered when a repair takes longer than 14 days.`,
        },
      ],
    },
  };
}

/**
 * A wide, deep trace: `count` spans, chains of 10 under one root (for the tree and the benchmark).
 * With `payloads`, its chat spans carry a conversation and its tools their arguments and result,
 * as an agent's trace does (about 0.6 KB a span on average).
 */
export function bigTrace(traceId: string, start: number, count: number, options: { payloads?: boolean } = {}) {
  const spans: Array<Record<string, unknown>> = [
    {
      spanId: 's0',
      name: 'root',
      kind: 'agent',
      startTime: iso(start),
      endTime: iso(start + count * 10 + 10),
      durationMs: count * 10 + 10,
      status: 'ok',
    },
  ];
  for (let i = 1; i < count; i++) {
    const parent = i % 10 === 1 ? 's0' : `s${i - 1}`;
    const s = start + i * 10;
    const kind = i % 3 === 0 ? 'llm.chat' : i % 3 === 1 ? 'tool' : 'chain';
    const payloads = !options.payloads
      ? {}
      : kind === 'llm.chat'
        ? chatPayloads(i)
        : kind === 'tool'
          ? { input: { raw: { orderId: `A-${i}` } }, output: { raw: { purchased: '2024-11-02', model: 'K-200' } } }
          : {};
    spans.push({
      spanId: `s${i}`,
      parentSpanId: parent,
      name: `step ${i}`,
      kind,
      startTime: iso(s),
      endTime: iso(s + 8),
      durationMs: 8,
      status: i % 97 === 0 ? 'error' : 'ok',
      ...payloads,
    });
  }
  return { traceId, name: `big trace of ${count}`, source: 'sdk', environment: 'staging', spans };
}

export function seededTraces(now: number) {
  return [
    agentTrace('trace-a', now - 30 * minute),
    agentTrace('trace-b', now - 20 * minute, { environment: 'staging', sessionId: 'conv-2' }),
    agentTrace('trace-c', now - 10 * minute, { error: true }),
  ];
}
