import type { Trace } from '../src/traces/model/schemas.js';

/**
 * The query benchmark's data: traces of 10 spans (an agent root, 4 LLM calls, 3 tool calls,
 * a retrieval, a formatting chain) spread over a time range, 4 models of 3 providers, 2% of
 * traces failing, 3 sources, 3 environments, sessions of 5–20 traces a few minutes apart, 5,000
 * users, 1–3 tags of 12 per trace, and one long session (`bigSessionId`): every fifth of the
 * first 100,000 traces, 20,000 traces over the whole range.
 * Deterministic: trace n is the same in every run. Trace ids start with the trace number in
 * hex, so they sort in arrival order, as time-ordered ids (UUIDv7, ULID) do.
 */
export const spansPerTrace = 10;

const models = [
  { model: 'gpt-4o', provider: 'openai', inPerToken: 2.5e-6, outPerToken: 10e-6 },
  { model: 'gpt-4o-mini', provider: 'openai', inPerToken: 0.15e-6, outPerToken: 0.6e-6 },
  { model: 'claude-sonnet-4', provider: 'anthropic', inPerToken: 3e-6, outPerToken: 15e-6 },
  { model: 'gemini-2.5-pro', provider: 'google', inPerToken: 1.25e-6, outPerToken: 10e-6 },
] as const;
const sources = ['sdk', 'otel', 'langchain'] as const;
const tags = ['support', 'billing', 'beta', 'mobile', 'web', 'api', 'eu', 'us', 'trial', 'enterprise', 'voice', 'batch'] as const;
export const users = 5000;
export const bigSessionId = 'session-long';
export const bigSessionTraces = 20_000;
/** Trace n belongs to the long session. */
const inBigSession = (n: number) => n < bigSessionTraces * 5 && n % 5 === 4;
const environments = ['production', 'staging', 'development'] as const;

/** mulberry32: a small seeded generator, so a trace number always yields the same trace. */
export function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SessionPlan {
  id: string;
  start: number;
  size: number;
}

/** Sessions in order: session k holds 5–20 consecutive traces and starts at a random time of the range. */
export function sessionOf(traceNumber: number, rangeStart: number, rangeMs: number): { session: SessionPlan; position: number } {
  // Trace numbers come in blocks of 20: a block is one session of 20, or two of 5–15 each.
  const block = Math.floor(traceNumber / 20);
  const rand = random(block * 7919 + 17);
  const size = rand() < 0.25 ? 20 : 5 + Math.floor(rand() * 11);
  const position = traceNumber % 20;
  const start = rangeStart + Math.floor(rand() * (rangeMs - 4 * 3600_000));
  // Numbers past the session's size form a second, shorter session of the same block.
  const second = position >= size;
  return {
    session: { id: `session-${block}${second ? 'b' : ''}`, start: second ? start + 3600_000 : start, size: second ? 20 - size : size },
    position: second ? position - size : position,
  };
}

export function makeQueryTrace(traceNumber: number, rangeStart: number, rangeMs: number): Trace {
  const rand = random(traceNumber * 104_729 + 3);
  const { session, position } = sessionOf(traceNumber, rangeStart, rangeMs);
  const base = session.start + position * (60_000 + Math.floor(rand() * 240_000));
  const t = (ms: number) => new Date(base + ms).toISOString();
  const failed = rand() < 0.02;
  const main = models[Math.floor(rand() * models.length)]!;
  const spans: Trace['spans'] = [];
  let cursor = 50;
  spans.push({
    spanId: 'retrieve',
    parentSpanId: 'root',
    name: 'vector search',
    kind: 'retrieval',
    startTime: t(5),
    endTime: t(45),
    durationMs: 40,
    status: 'ok',
  });
  for (let i = 0; i < 4; i++) {
    const m = i === 3 ? models[1] : main;
    const duration = Math.round(300 + rand() ** 2 * 4000);
    const inputTokens = 200 + Math.floor(rand() * 1800);
    const outputTokens = 50 + Math.floor(rand() * 450);
    spans.push({
      spanId: `llm-${i}`,
      parentSpanId: 'root',
      name: `chat ${m.model}`,
      kind: 'llm.chat',
      startTime: t(cursor),
      endTime: t(cursor + duration),
      durationMs: duration,
      status: 'ok',
      model: m.model,
      provider: m.provider,
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      costUsd: inputTokens * m.inPerToken + outputTokens * m.outPerToken,
      input: { text: 'Summarise the account history and propose next steps.' },
      output: { text: 'Three steps: review pricing, call the owner, set alerts.' },
    });
    cursor += duration + 5;
    if (i < 3) {
      const toolMs = Math.round(20 + rand() * 480);
      const toolFailed = failed && i === 2;
      spans.push({
        spanId: `tool-${i}`,
        parentSpanId: `llm-${i}`,
        name: 'lookup_account',
        kind: 'tool',
        startTime: t(cursor),
        endTime: t(cursor + toolMs),
        durationMs: toolMs,
        status: toolFailed ? 'error' : 'ok',
        ...(toolFailed && { statusMessage: 'account service timed out' }),
      });
      cursor += toolMs + 5;
    }
  }
  spans.push({
    spanId: 'format',
    parentSpanId: 'root',
    name: 'format answer',
    kind: 'chain',
    startTime: t(cursor),
    endTime: t(cursor + 30),
    durationMs: 30,
    status: 'ok',
  });
  cursor += 35;
  spans.unshift({
    spanId: 'root',
    name: 'support-agent',
    kind: 'agent',
    startTime: t(0),
    endTime: t(cursor),
    durationMs: cursor,
    status: failed ? 'error' : 'ok',
    ...(failed && { statusMessage: 'a tool failed' }),
  });
  const tail = Math.floor(rand() * 0xffffffff)
    .toString(16)
    .padStart(8, '0');
  return {
    traceId: `${traceNumber.toString(16).padStart(8, '0')}${tail}`,
    name: 'account summary',
    sessionId: inBigSession(traceNumber) ? bigSessionId : session.id,
    userId: `user-${Math.floor(rand() * users)}`,
    tags: Array.from(new Set(Array.from({ length: 1 + Math.floor(rand() * 3) }, () => tags[Math.floor(rand() * tags.length)]!))),
    source: sources[traceNumber % sources.length]!,
    environment: environments[Math.floor(rand() * environments.length)]!,
    spans,
  };
}
