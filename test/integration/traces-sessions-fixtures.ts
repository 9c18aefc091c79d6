import { expect } from 'vitest';
import type { Tenant, TestContext } from '../support/app.js';
import { post, span } from './traces-fixtures.js';

/**
 * A small workspace with known figures for the session, user, filter and sort tests (all on
 * 2025-03-01, read with `window`):
 * - session s1: a1 (u1, tags x y, 10:00–10:01, cost 0.5), a2 (u2, tag x, 10:05–10:07, root and
 *   its generation failed, cost 0.25), a3 (u1, running since 10:10, no usage);
 * - session s2: b1 (u1, tag y, 11:00–11:30, gpt-4o, cost 1);
 * - no session: c1 (u3, tags x y z, named "special", 12:00–12:01, gpt-4o, cost 2).
 */
export const window = 'startAfter=2025-03-01T00:00:00Z&startBefore=2025-03-02T00:00:00Z';
const at = (time: string) => `2025-03-01T${time}.000Z`;
const ms = (from: string, to: string) => Date.parse(at(to)) - Date.parse(at(from));

interface Plan {
  id: string;
  sessionId?: string;
  userId: string;
  tags?: string[];
  name?: string;
  from: string;
  to: string;
  failed?: boolean;
  running?: boolean;
  llm?: { model: string; input: number; output: number; cost: number };
}

export function planned(suffix: string): Plan[] {
  return [
    {
      id: `a1-${suffix}`,
      sessionId: 's1',
      userId: 'u1',
      tags: ['x', 'y'],
      from: '10:00:00',
      to: '10:01:00',
      llm: { model: 'gpt-4o-mini', input: 100, output: 20, cost: 0.5 },
    },
    {
      id: `a2-${suffix}`,
      sessionId: 's1',
      userId: 'u2',
      tags: ['x'],
      from: '10:05:00',
      to: '10:07:00',
      failed: true,
      llm: { model: 'gpt-4o-mini', input: 10, output: 5, cost: 0.25 },
    },
    { id: `a3-${suffix}`, sessionId: 's1', userId: 'u1', from: '10:10:00', to: '10:11:00', running: true },
    {
      id: `b1-${suffix}`,
      sessionId: 's2',
      userId: 'u1',
      tags: ['y'],
      from: '11:00:00',
      to: '11:30:00',
      llm: { model: 'gpt-4o', input: 50, output: 50, cost: 1 },
    },
    {
      id: `c1-${suffix}`,
      userId: 'u3',
      tags: ['x', 'y', 'z'],
      name: 'special',
      from: '12:00:00',
      to: '12:01:00',
      llm: { model: 'gpt-4o', input: 1000, output: 1000, cost: 2 },
    },
  ];
}

export function payload(plan: Plan) {
  const spans: Record<string, unknown>[] = [];
  if (!plan.running) {
    spans.push(
      span({
        spanId: 'root',
        kind: 'agent',
        startTime: at(plan.from),
        endTime: at(plan.to),
        durationMs: ms(plan.from, plan.to),
        status: plan.failed ? 'error' : 'ok',
      }),
    );
  }
  if (plan.llm) {
    const { model, input, output, cost } = plan.llm;
    spans.push(
      span({
        spanId: 'llm',
        parentSpanId: 'root',
        kind: 'llm.chat',
        model,
        provider: 'openai',
        inputTokens: input,
        outputTokens: output,
        totalTokens: input + output,
        costUsd: cost,
        startTime: at(plan.from),
        endTime: at(plan.to),
        durationMs: ms(plan.from, plan.to),
        status: plan.failed ? 'error' : 'ok',
      }),
    );
  }
  if (plan.running) {
    spans.push(
      span({ spanId: 'step', parentSpanId: 'root', startTime: at(plan.from), endTime: at(plan.to), durationMs: ms(plan.from, plan.to) }),
    );
  }
  return {
    traceId: plan.id,
    source: 'sdk',
    userId: plan.userId,
    ...(plan.sessionId && { sessionId: plan.sessionId }),
    ...(plan.tags && { tags: plan.tags }),
    ...(plan.name && { name: plan.name }),
    spans,
  };
}

export async function seedSessions(ctx: TestContext, tenant: Tenant, suffix: string) {
  const plans = planned(suffix);
  const res = await post(ctx, tenant, plans.map(payload));
  expect(res.json().data).toMatchObject({ accepted: 5, rejected: 0 });
  const [a1, a2, a3, b1, c1] = plans.map((p) => p.id) as [string, string, string, string, string];
  return { a1, a2, a3, b1, c1 };
}

export const expectedS1 = {
  sessionId: 's1',
  traceCount: 3,
  firstStartTime: '2025-03-01T10:00:00.000Z',
  lastEndTime: '2025-03-01T10:07:00.000Z',
  durationMs: 420_000,
  userIds: ['u1', 'u2'],
  inputTokens: 110,
  outputTokens: 25,
  totalTokens: 135,
  costUsd: 0.75,
  errorCount: 2,
  traceErrorCount: 1,
};
export const expectedS2 = {
  sessionId: 's2',
  traceCount: 1,
  firstStartTime: '2025-03-01T11:00:00.000Z',
  lastEndTime: '2025-03-01T11:30:00.000Z',
  durationMs: 1_800_000,
  userIds: ['u1'],
  inputTokens: 50,
  outputTokens: 50,
  totalTokens: 100,
  costUsd: 1,
  errorCount: 0,
  traceErrorCount: 0,
};
export const expectedUsers = {
  u1: {
    userId: 'u1',
    traceCount: 3,
    sessionCount: 2,
    inputTokens: 150,
    outputTokens: 70,
    totalTokens: 220,
    costUsd: 1.5,
    errorCount: 0,
    traceErrorCount: 0,
    firstSeen: '2025-03-01T10:00:00.000Z',
    lastSeen: '2025-03-01T11:30:00.000Z',
  },
  u2: {
    userId: 'u2',
    traceCount: 1,
    sessionCount: 1,
    inputTokens: 10,
    outputTokens: 5,
    totalTokens: 15,
    costUsd: 0.25,
    errorCount: 2,
    traceErrorCount: 1,
    firstSeen: '2025-03-01T10:05:00.000Z',
    lastSeen: '2025-03-01T10:07:00.000Z',
  },
  u3: {
    userId: 'u3',
    traceCount: 1,
    sessionCount: 0,
    inputTokens: 1000,
    outputTokens: 1000,
    totalTokens: 2000,
    costUsd: 2,
    errorCount: 0,
    traceErrorCount: 0,
    firstSeen: '2025-03-01T12:00:00.000Z',
    lastSeen: '2025-03-01T12:01:00.000Z',
  },
};
