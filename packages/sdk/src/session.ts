import { randomUUID } from 'node:crypto';
import type { Loupe } from './client.js';
import { errorMessage, type Span } from './span.js';
import type { SpanIO } from './types.js';

/** Names of the span events of the session convention. */
export const SESSION_EVENTS = { compaction: 'context.compaction', stop: 'session.stop' } as const;

export interface CodingSessionOptions {
  /** The trace's sessionId; default the client's, else a new UUID. */
  sessionId?: string;
  /** Root span and trace name; default "session". */
  name?: string;
  attributes?: Record<string, unknown>;
}

const io = (value: unknown): SpanIO => (typeof value === 'string' ? { text: value } : { raw: value });

/** A tool span under a turn (or agent): ok(result) or fail(error) ends it. */
export class ToolCall {
  constructor(
    readonly span: Span,
    private readonly done: (call: ToolCall) => void,
  ) {}

  ok(result?: unknown): void {
    if (this.span.ended) return;
    if (result !== undefined) this.span.setOutput(io(result));
    this.span.end({ status: 'ok' });
    this.done(this);
  }

  fail(error: unknown): void {
    if (this.span.ended) return;
    this.span.end({ status: 'error', statusMessage: errorMessage(error) });
    this.done(this);
  }
}

/** An agent span (the session's root, or a sub-agent) and its open children. */
export class AgentScope {
  protected turnSpan: Span | undefined;
  private readonly subAgents: SubAgent[] = [];
  private readonly tools = new Set<ToolCall>();

  constructor(
    protected readonly loupe: Loupe,
    readonly span: Span,
  ) {}

  /** A tool span under the current turn, or under this agent when no turn is open. */
  toolCall(name: string, args: unknown = {}, options: { toolCallId?: string } = {}): ToolCall {
    const active = this.innermost();
    if (active !== this) return active.toolCall(name, args, options);
    const id = options.toolCallId ?? randomUUID();
    const argumentsObject =
      args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : { value: args };
    const span = this.loupe.startSpan(name, {
      kind: 'tool',
      parent: this.turnSpan ?? this.span,
      input: { toolCalls: [{ id, name, arguments: argumentsObject }] },
      attributes: { 'gen_ai.tool.name': name, 'gen_ai.tool.call.id': id },
    });
    const call = new ToolCall(span, (c) => this.tools.delete(c));
    this.tools.add(call);
    return call;
  }

  /** A child agent span under the current turn (or this agent). */
  subAgent(name: string, options: { input?: unknown; attributes?: Record<string, unknown> } = {}): SubAgent {
    const active = this.innermost();
    if (active !== this) return active.subAgent(name, options);
    const span = this.loupe.startSpan(name, {
      kind: 'agent',
      parent: this.turnSpan ?? this.span,
      ...(options.input !== undefined ? { input: io(options.input) } : {}),
      attributes: { 'gen_ai.agent.name': name, ...options.attributes },
    });
    const agent = new SubAgent(this.loupe, span, (a) => this.subAgents.splice(this.subAgents.indexOf(a), 1));
    this.subAgents.push(agent);
    return agent;
  }

  /** A context-compaction occurrence: an event on the active span, not a span. */
  compaction(details: Record<string, unknown> = {}): void {
    this.activeSpan().addEvent(SESSION_EVENTS.compaction, details);
  }

  /** The span events land on: the innermost open sub-agent, else the open turn, else this agent. */
  activeSpan(): Span {
    const inner = this.innermost();
    return inner === this ? (this.turnSpan ?? this.span) : inner.activeSpan();
  }

  /** Closes what is still open beneath this agent: tools unfinished (status unset), sub-agents, the turn. */
  protected closeChildren(): void {
    for (const call of this.tools) call.span.end({ statusMessage: 'not finished when its agent ended' });
    this.tools.clear();
    for (const agent of [...this.subAgents].reverse()) agent.end();
    this.endTurn();
  }

  protected endTurn(output?: unknown): void {
    if (!this.turnSpan) return;
    if (output !== undefined) this.turnSpan.setOutput(io(output));
    this.turnSpan.end({ status: this.turnSpan.status === 'unset' ? 'ok' : this.turnSpan.status });
    this.turnSpan = undefined;
  }

  private innermost(): AgentScope {
    const last = this.subAgents.at(-1);
    return last ? last : this;
  }
}

/** A child agent: its own tools and sub-agents; end(output) or fail(error) closes it. */
export class SubAgent extends AgentScope {
  constructor(
    loupe: Loupe,
    span: Span,
    private readonly done: (agent: SubAgent) => void,
  ) {
    super(loupe, span);
  }

  end(output?: unknown): void {
    if (this.span.ended) return;
    this.closeChildren();
    if (output !== undefined) this.span.setOutput(io(output));
    this.span.end({ status: 'ok' });
    this.done(this);
  }

  fail(error: unknown): void {
    if (this.span.ended) return;
    this.closeChildren();
    this.span.end({ status: 'error', statusMessage: errorMessage(error) });
    this.done(this);
  }
}

/**
 * SPEC.md's coding-assistant session convention: start() makes the root agent span, each
 * turn a chain span, each tool call a tool span under the turn, each sub-agent a child agent
 * span; compaction and stop are events on the active span; end() closes the root.
 */
export class CodingSession extends AgentScope {
  readonly sessionId: string;
  private turns = 0;

  constructor(loupe: Loupe, options: CodingSessionOptions = {}) {
    const sessionId = options.sessionId ?? loupe.options.sessionId ?? randomUUID();
    const name = options.name ?? 'session';
    super(
      loupe,
      loupe.startSpan(name, {
        kind: 'agent',
        parent: null,
        sessionId,
        traceName: name,
        attributes: { 'gen_ai.agent.name': name, 'session.id': sessionId, ...options.attributes },
      }),
    );
    this.sessionId = sessionId;
  }

  /** The root span (made when the session was created); here for the convention's vocabulary. */
  start(input?: unknown): Span {
    if (input !== undefined) this.span.setInput(io(input));
    return this.span;
  }

  /** A new user turn: a chain span under the root. An open previous turn ends first (ok). */
  turn(prompt: string, options: { attributes?: Record<string, unknown> } = {}): Span {
    this.endTurn();
    this.turns += 1;
    this.turnSpan = this.loupe.startSpan(`turn ${this.turns}`, {
      kind: 'chain',
      parent: this.span,
      input: { messages: [{ role: 'user', content: prompt }] },
      attributes: { 'session.turn': this.turns, ...options.attributes },
    });
    return this.turnSpan;
  }

  /** The assistant finished the turn: a graceful-stop event on the active span, then the turn ends (ok). */
  stop(details: { reason?: string; output?: string } & Record<string, unknown> = {}): void {
    const { output, ...attributes } = details;
    this.activeSpan().addEvent(SESSION_EVENTS.stop, { graceful: true, ...attributes });
    if (this.turnSpan && output !== undefined) this.turnSpan.setOutput({ messages: [{ role: 'assistant', content: output }] });
    this.endTurn();
  }

  /** Session end: whatever is open closes, then the root span (ok, or error when given one). */
  end(options: { output?: unknown; error?: unknown } = {}): void {
    if (this.span.ended) return;
    this.closeChildren();
    if (options.output !== undefined) this.span.setOutput(io(options.output));
    if (options.error !== undefined) this.span.end({ status: 'error', statusMessage: errorMessage(options.error) });
    else this.span.end({ status: 'ok' });
  }
}
