import { randomBytes } from 'node:crypto';
import { toStoredTime } from '../src/traces/model/stored-time.js';
import type { Trace } from '../src/traces/model/schemas.js';

/**
 * Realistic traces for the ingest benchmark: 10 spans each, an agent root, LLM calls with a
 * few hundred bytes of messages, tool calls, a retrieval, and gen_ai.* attributes.
 */
export const spansPerTrace = 10;

const question =
  'Our quarterly report shows revenue of 4.2M with churn at 3.1%. Summarise the main drivers, compare them with last ' +
  'quarter, and list three actions the customer-success team should take next, with owners and dates.';
const answer =
  'Revenue grew 8% quarter on quarter, led by expansion in the enterprise tier; churn rose slightly among small ' +
  'accounts after the price change. Actions: 1) review small-account pricing (finance, by 15 May), 2) onboarding ' +
  'calls for new seats (success, ongoing), 3) health-score alerts for accounts under 40 (ops, by 1 June).';

export function makeTrace(traceId: string, base: number): Trace {
  const t = (ms: number) => new Date(base + ms).toISOString();
  const spans: Trace['spans'] = [
    {
      spanId: 'root',
      name: 'support-agent',
      kind: 'agent',
      startTime: t(0),
      endTime: t(4000),
      durationMs: 4000,
      status: 'ok',
      input: { text: question },
      output: { text: answer },
      attributes: { 'gen_ai.agent.name': 'support-agent', 'app.user_tier': 'enterprise' },
    },
  ];
  for (let i = 0; i < 4; i++) {
    spans.push({
      spanId: `llm-${i}`,
      parentSpanId: 'root',
      name: 'chat gpt-4o-mini',
      kind: 'llm.chat',
      startTime: t(100 + i * 900),
      endTime: t(800 + i * 900),
      durationMs: 700,
      status: 'ok',
      model: 'gpt-4o-mini',
      provider: 'openai',
      inputTokens: 420 + i,
      outputTokens: 96,
      totalTokens: 516 + i,
      costUsd: 0.00012,
      input: {
        messages: [
          { role: 'system', content: 'You are a concise analyst.' },
          { role: 'user', content: question },
        ],
      },
      output: { messages: [{ role: 'assistant', content: answer }] },
      attributes: { 'gen_ai.request.temperature': 0.2, 'gen_ai.request.max_tokens': 512, 'gen_ai.response.finish_reasons': ['stop'] },
      events: [{ name: 'gen_ai.first_token', timestamp: t(300 + i * 900) }],
    });
  }
  for (let i = 0; i < 3; i++) {
    spans.push({
      spanId: `tool-${i}`,
      parentSpanId: `llm-${i}`,
      name: 'lookup_account',
      kind: 'tool',
      startTime: t(810 + i * 900),
      endTime: t(880 + i * 900),
      durationMs: 70,
      status: i === 2 ? 'error' : 'ok',
      ...(i === 2 && { statusMessage: 'account service timed out' }),
      input: { toolCalls: [{ id: `call-${i}`, name: 'lookup_account', arguments: { accountId: `acc-${i}`, fields: ['plan', 'seats'] } }] },
      output: { raw: { plan: 'enterprise', seats: 120 + i } },
      attributes: { 'gen_ai.tool.name': 'lookup_account', 'http.status_code': i === 2 ? 504 : 200 },
    });
  }
  spans.push({
    spanId: 'retrieve',
    parentSpanId: 'root',
    name: 'vector search',
    kind: 'retrieval',
    startTime: t(50),
    endTime: t(95),
    durationMs: 45,
    status: 'ok',
    input: { text: 'quarterly churn drivers' },
    output: {
      documents: [{ content: 'Churn rose after the price change in small accounts.', score: 0.91, metadata: { source: 'q1.pdf' } }],
    },
  });
  spans.push({
    spanId: 'format',
    parentSpanId: 'root',
    name: 'format answer',
    kind: 'chain',
    startTime: t(3700),
    endTime: t(3990),
    durationMs: 290,
    status: 'ok',
    metadata: { template: 'summary-v3' },
  });
  return { traceId, name: 'quarterly summary', sessionId: `session-${traceId.slice(-3)}`, source: 'sdk', environment: 'production', spans };
}

/**
 * One request body as JSON text with a `@@nnn` placeholder per trace id. `withoutCost`: the
 * LLM spans send no cost (as OpenTelemetry instrumentations do), so ingest prices them.
 */
const templateBase = Date.parse('2025-06-01T12:00:00.000Z');

export function makeBodyTemplate(traces: number, withoutCost = false): string {
  const made = Array.from({ length: traces }, (_, i) => makeTrace(`@@${String(i).padStart(3, '0')}`, templateBase + i * 1000));
  if (withoutCost) for (const t of made) for (const s of t.spans) delete s.costUsd;
  return JSON.stringify({ traces: made });
}

const templateTime = /"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"/g;
const latestTimes = new Map<string, number>();

/**
 * The template's times moved so that its latest is `now`: a body's traces end as it is sent, as
 * the traces a real client flushes do, and start a few seconds before (the template is dated
 * 2025-06-01T12:00:00Z, a second between traces).
 */
export function fillStartTimes(template: string, now: number): string {
  let latest = latestTimes.get(template);
  if (latest === undefined) {
    latest = Math.max(...[...template.matchAll(templateTime)].map((m) => Date.parse(m[1]!)));
    latestTimes.set(template, latest);
  }
  const shift = now - latest;
  return template.replace(templateTime, (_, time: string) => `"${new Date(Date.parse(time) + shift).toISOString()}"`);
}

/** Random 32-hex trace ids, as OpenTelemetry makes them: a batch's traces spread over the whole key space. */
export const randomTraceId = () => randomBytes(16).toString('hex');
export const fillTraceIds = (template: string) => template.replace(/@@\d{3}/g, randomTraceId);

/** The summary row of a trace made by `makeTrace`, the columns a list and the raw baseline write (the others take their defaults). */
export function summaryOf(workspaceId: string, t: Trace) {
  return {
    workspace_id: workspaceId,
    trace_id: t.traceId,
    name: t.name ?? '',
    session_id: t.sessionId ?? '',
    source: t.source ?? '',
    environment: t.environment ?? '',
    status: 'completed',
    trace_kind: 'agent',
    start_time: toStoredTime(t.spans[0]!.startTime),
    end_time: toStoredTime(t.spans[0]!.endTime),
    duration_ms: 4000,
    model: 'gpt-4o-mini',
    provider: 'openai',
    input_tokens: 1686,
    output_tokens: 384,
    total_tokens: 2070,
    cost_usd: 0.00048,
    span_count: 10,
    error_count: 1,
    is_deleted: 0 as const,
  };
}
