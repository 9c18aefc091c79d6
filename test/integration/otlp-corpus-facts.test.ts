import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/app.js';
import {
  casesWithFacts,
  corpusRawSpans,
  corpusRequests,
  matchesRule,
  replayCase,
  type CaseFacts,
  type RoleOverride,
} from '../support/otlp-corpus.js';

/**
 * The cases of the OTLP corpus that carry their facts as data (case.json beside the recorded
 * requests) replayed byte for byte through the HTTP routes, every fact checked. Every case ran
 * the same script: a root span, then the calls named by `roles` in order (hello: system + user;
 * stream; toolcall: answered by a tool call; followup: with the tool's answer; embed; bad: a 400;
 * boom: a 500), the manual tool span `get_weather` between toolcall and followup. `gen`, `tool`
 * and `wrapper` say how the case's spans of each part are recognized in the requests as sent;
 * `override` the facts of a call that differ from the script's.
 */

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

type Span = Record<string, any>;
type Trace = Record<string, any> & { spans: Span[] };

const weatherCall = { id: 'call_fake_weather_1', name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } };
const toolAnswer = { city: 'Paris', temperature: 18, unit: 'celsius', sky: 'sunny' };
const badModel = "The model 'bad-model' does not exist or you do not have access to it.";
const serverError = 'The server had an error while processing your request.';
const system = 'You are a terse assistant.';

/** The script's facts per call, before a case's overrides. */
const defaults: Record<string, RoleOverride & { models: string[]; tokens: [number, number, number] | null }> = {
  hello: {
    models: ['gpt-4o-mini'],
    tokens: [23, 11, 34],
    input: [
      ['system', system],
      ['user', 'Say hello to Loupe'],
    ],
    answer: 'Fake answer to: Say hello to Loupe',
  },
  stream: {
    models: ['gpt-4o-mini'],
    tokens: [23, 11, 34],
    input: [['user', 'Stream a short greeting']],
    answer: 'Fake answer to: Stream a short greeting',
  },
  toolcall: { models: ['gpt-4o-mini'], tokens: [61, 18, 79], input: [['user', 'What is the weather in Paris?']], toolCall: weatherCall },
  followup: {
    models: ['gpt-4o-mini'],
    tokens: [23, 11, 34],
    toolCallId: weatherCall.id,
    answer: 'It is 18 degrees Celsius and sunny in Paris.',
  },
  embed: { models: ['text-embedding-3-small'], tokens: [7, 0, 7], kinds: ['llm.embedding'] },
  bad: { models: ['bad-model'], tokens: null, input: [['user', 'this will fail']] },
  boom: { models: ['boom-500'], tokens: null, input: [['user', 'this will 500']] },
};

/** A model named by the script matches the response's dated name too (gpt-4o-mini-2024-07-18). */
const modelMatches = (model: string | undefined, names: string[]) => names.some((name) => model === name || model?.startsWith(`${name}-`));
const byStart = (a: Span, b: Span) => a.startTime.localeCompare(b.startTime) || a.spanId.localeCompare(b.spanId);
const text = (role: string, content: string) => ({ role, content });
const tokensOf = (span: Span) => [span.inputTokens ?? 0, span.outputTokens ?? 0, span.totalTokens ?? 0];

interface Run {
  facts: CaseFacts;
  /** Replay order of the requests when not their numbering (the logs before the spans). */
  order?: string[];
}

const runs: Run[] = casesWithFacts().flatMap((facts) => {
  const list: Run[] = [{ facts }];
  if (facts.logsBothOrders)
    list.push({
      facts,
      order: corpusRequests(facts.name)
        .map((r) => r.stem)
        .reverse(),
    });
  return list;
});

for (const { facts: c, order } of runs) {
  describe(`corpus ${c.name}${order ? ` (requests in the order ${order.join(', ')})` : ''}`, () => {
    let responses: { statusCode: number }[];
    let trace: Trace;
    let root: Span;
    let gens: Span[];
    let calls: Record<string, Span>;
    const facts = (role: string) => ({ ...defaults[role]!, ...c.override?.[role] });

    beforeAll(async () => {
      // Each run its own tenant, so the two orders of one case never share a trace.
      const tenant = await ctx.tenant();
      responses = await replayCase(ctx.app, tenant, c.name, order);
      const res = await ctx.app.inject({ method: 'GET', url: `/api/traces/${c.traceId}`, headers: tenant.headers });
      trace = res.json().data as Trace;
      const raw = corpusRawSpans(c.name);
      root = trace.spans.find((s) => s.parentSpanId === undefined)!;
      gens = trace.spans.filter((s) => matchesRule(raw.get(s.spanId), c.gen)).sort(byStart);
      calls = Object.fromEntries(c.roles.map((role, i) => [role, gens[i]!]));
    });
    const rawSpans = () => corpusRawSpans(c.name);

    it('accepts every request whole', () => {
      for (const res of responses) expect(res.statusCode).toBe(200);
    });
    it('stores every span in one tree under the root', () => {
      expect(trace.spanCount).toBe(c.spanCount);
      expect(trace.spans).toHaveLength(c.spanCount);
      expect(root.name).toBe(c.rootName);
      expect(c.rootKinds).toContain(root.kind);
      expect(trace.name).toBe(c.rootName);
    });
    it('trace fields: session, user, environment, service', () => {
      expect({ sessionId: trace.sessionId, userId: trace.userId, environment: trace.environment, service: trace.service }).toEqual(c.trace);
    });
    it('one generation span per call, of its kind and model', () => {
      expect(gens.map((s) => s.name)).toHaveLength(c.roles.length);
      for (const role of c.roles) {
        const f = facts(role);
        expect(f.kinds ?? ['llm.chat'], role).toContain(calls[role]!.kind);
        expect(modelMatches(calls[role]!.model, f.models), `${role}: ${calls[role]!.model}`).toBe(true);
      }
    });
    it('the provider, where the library names it', () => {
      if (!c.provider) return;
      for (const role of c.roles) expect(calls[role]!.provider, role).toBe(c.providerName);
    });
    it('token counts of each call', () => {
      for (const role of c.roles) {
        const { tokens } = facts(role);
        const span = calls[role]!;
        if (tokens === null || tokens === undefined) {
          expect(span.inputTokens, role).toBeUndefined();
          expect(span.outputTokens, role).toBeUndefined();
          continue;
        }
        expect({ role, input: span.inputTokens, output: span.outputTokens ?? 0, total: span.totalTokens }).toEqual({
          role,
          input: tokens[0],
          output: tokens[1],
          total: tokens[2],
        });
      }
    });
    it('cache counts and costs where the case gives them', () => {
      for (const role of c.roles) {
        const f = facts(role);
        const span = calls[role]!;
        if (f.cacheTokens) expect({ read: span.cacheReadTokens, write: span.cacheWriteTokens }, role).toEqual(f.cacheTokens);
        if (f.priced) expect(span.costSource, role).toBe('computed');
        if (f.costUsd !== undefined) expect(span.costUsd, role).toBeCloseTo(f.costUsd, 9);
      }
    });
    it('each call counted once: the trace totals are the sums of the generation spans', () => {
      const totals = [trace.inputTokens ?? 0, trace.outputTokens ?? 0, trace.totalTokens ?? 0];
      expect([c.totals, ...(c.altTotals ?? [])]).toContainEqual(totals);
      const sums = [0, 0, 0];
      for (const span of gens) tokensOf(span).forEach((n, i) => (sums[i]! += n));
      expect(totals).toEqual(sums);
      const cost = gens.reduce((sum, s) => sum + (s.costUsd ?? 0), 0);
      expect(trace.costUsd ?? 0).toBeCloseTo(cost, 12);
    });
    it('the wrapper spans are not generation spans of their own', () => {
      if (!c.wrapper) return;
      const raw = rawSpans();
      const wrappers = trace.spans.filter((s) => matchesRule(raw.get(s.spanId), c.wrapper!));
      expect(wrappers.length).toBeGreaterThan(0);
      for (const w of wrappers) expect(gens).not.toContain(w);
    });
    it('time to first token of the stream', () => {
      const stream = calls.stream!;
      const span = c.ttftSpan === 'child' ? trace.spans.find((s) => s.parentSpanId === stream.spanId)! : stream;
      if (!c.ttft) {
        expect(span.ttftMs).toBeUndefined();
        return;
      }
      expect(span.ttftMs).toBeGreaterThanOrEqual(145);
      expect(span.ttftMs).toBeLessThan(span.durationMs);
    });
    it('the input messages of each call', () => {
      if (c.contentCaptured === false) return;
      for (const role of ['hello', 'stream', 'toolcall', 'bad', 'boom'].filter((r) => c.roles.includes(r))) {
        const f = facts(role);
        const messages = calls[role]!.input?.messages;
        if (f.inputAbsent) continue;
        let want = f.input!.map(([r, content]) => text(r, content));
        if (f.systemOptional && messages?.[0]?.role !== 'system') want = want.filter((m) => m.role !== 'system');
        expect(messages, role).toEqual(want);
      }
    });
    it('the answers, and the tool call of the tool-call answer', () => {
      if (c.contentCaptured === false) return;
      for (const role of ['hello', 'stream', 'followup']) {
        const { answer, answerTextOk } = facts(role);
        const output = calls[role]!.output;
        if (answerTextOk && output?.text !== undefined) expect(output.text, role).toBe(answer);
        else expect(output?.messages, role).toEqual([text('assistant', answer!)]);
      }
      const f = facts('toolcall');
      if (f.outputToolCallAbsent) return;
      const call = { ...f.toolCall!, ...(f.toolCallIdAbsent ? { id: '' } : {}) };
      expect(calls.toolcall!.output.messages).toEqual([{ role: 'assistant', content: '', toolCalls: [call] }]);
    });
    it('the follow-up: the question, the assistant turn with its call, the tool answer', () => {
      if (c.contentCaptured === false || facts('followup').inputAbsent) return;
      const f = facts('followup');
      const call = f.toolCallIdAbsent ? { ...facts('toolcall').toolCall!, id: '' } : facts('toolcall').toolCall!;
      const messages = calls.followup!.input.messages as Span[];
      const [user, assistant, answer] = messages.filter((m) => m.role !== 'system');
      expect(user).toEqual(text('user', 'What is the weather in Paris?'));
      expect(assistant).toEqual({ role: 'assistant', content: '', toolCalls: [call] });
      expect(JSON.parse(answer!.content)).toEqual(toolAnswer);
      if (f.toolCallIdAbsent) expect(answer!.toolCallId).toBeUndefined();
      else expect(answer!.toolCallId).toBe(f.toolCallId);
    });
    it('the embeddings input where the library records it', () => {
      if (!c.roles.includes('embed') || !c.embedInput) return;
      const input = calls.embed!.input;
      expect(input.text ?? input.messages?.[0]?.content).toBe('Loupe traces embeddings');
    });
    it('the tool span', () => {
      const raw = rawSpans();
      const [tool] = trace.spans.filter((s) => matchesRule(raw.get(s.spanId), c.tool));
      expect(tool).toMatchObject({ name: expect.stringContaining('get_weather'), kind: 'tool' });
      const args = tool!.input.toolCalls?.[0]?.arguments ?? JSON.parse(tool!.input.text);
      expect(args).toEqual(weatherCall.arguments);
    });
    it('failed calls and their messages; the error count', () => {
      for (const [role, message] of [
        ['bad', badModel],
        ['boom', serverError],
      ] as const) {
        if (!c.roles.includes(role)) continue;
        const span = calls[role]!;
        if (facts(role).statusOk) {
          expect(span.status, role).not.toBe('error');
          continue;
        }
        expect(span.status, role).toBe('error');
        expect(span.statusMessage, role).toContain(message);
      }
      for (const role of ['hello', 'stream', 'toolcall', 'followup', 'embed'].filter((r) => c.roles.includes(r)))
        expect(calls[role]!.status, role).not.toBe('error');
      expect(trace.errorCount).toBe(c.errorCount);
      if (c.failedCalls !== undefined) expect(gens.filter((s) => s.status === 'error')).toHaveLength(c.failedCalls);
    });
    it("the root's input and output", () => {
      if (!c.rootIO) return;
      expect(JSON.stringify(root.input)).toContain(c.rootIO.input);
      expect(JSON.stringify(root.output)).toContain(c.rootIO.output);
    });
  });
}
