import { isoAt, monotonicMs, newSpanId, newTraceId, nowIso } from './clock.js';
import { toJsonObject, toJsonSafe } from './json-safe.js';
import type { ScoreInput, ScoreOptions } from './scores.js';
import type { PromptRecord, SpanEvent, SpanIO, SpanKind, SpanMetrics, SpanPayload, SpanStatus } from './types.js';

export interface SpanOptions {
  kind?: SpanKind;
  input?: SpanIO | string;
  attributes?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  metrics?: SpanMetrics;
  /** The parent; `null` starts a new trace even when a span is active. Default: the active span. */
  parent?: Span | null;
  /** Trace name, for a root span (default: the span's name). */
  traceName?: string;
  /** Session of the trace, for a root span (default: the client's sessionId). */
  sessionId?: string;
  /** The prompt this span uses (a record of loupe.prompts.get): its name and version are recorded. */
  prompt?: PromptRef;
}

/** What a span records of a prompt. A fallback names the prompt but no version: none of the service's was used. */
export type PromptRef = Pick<PromptRecord, 'name' | 'version'> & { isFallback?: boolean };

export interface EndOptions {
  status?: SpanStatus;
  statusMessage?: string;
  output?: SpanIO | string;
}

/** Trace-level fields every span of one trace carries to the transport. */
export interface TraceInfo {
  traceId: string;
  name: string;
  sessionId?: string;
}

export type SpanSink = (span: Span) => void;
/** Queues a score and answers its id. */
export type ScoreSink = (score: ScoreInput) => string;

const asIO = (io: SpanIO | string): SpanIO => (typeof io === 'string' ? { text: io } : io);

/** One unit of work. It is sent once it ends; until then every setter may be called. */
export class Span {
  readonly spanId = newSpanId();
  readonly trace: TraceInfo;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: SpanKind;
  readonly startTime: string;
  status: SpanStatus = 'unset';
  statusMessage: string | undefined;
  input: SpanIO | undefined;
  output: SpanIO | undefined;
  metrics: SpanMetrics = {};
  attributes: Record<string, unknown> = {};
  metadata: Record<string, unknown> = {};
  readonly events: SpanEvent[] = [];
  promptName: string | undefined;
  promptVersion: string | undefined;
  endTime: string | undefined;
  durationMs: number | undefined;
  private readonly startMono = monotonicMs();

  constructor(
    name: string,
    options: SpanOptions & { parent: Span | undefined },
    private readonly sink: SpanSink,
    private readonly scoreSink: ScoreSink,
  ) {
    this.name = name;
    this.kind = options.kind ?? 'custom';
    this.startTime = isoAt(this.startMono);
    const parent = options.parent;
    this.parentSpanId = parent?.spanId;
    this.trace = parent
      ? parent.trace
      : { traceId: newTraceId(), name: options.traceName ?? name, ...(options.sessionId ? { sessionId: options.sessionId } : {}) };
    if (options.input !== undefined) this.input = asIO(options.input);
    if (options.attributes) this.setAttributes(options.attributes);
    if (options.metadata) Object.assign(this.metadata, options.metadata);
    if (options.metrics) this.setMetrics(options.metrics);
    if (options.prompt) this.setPrompt(options.prompt);
  }

  /** Records the prompt version this span uses. */
  setPrompt(prompt: PromptRef): this {
    this.promptName = prompt.name;
    this.promptVersion = prompt.isFallback ? undefined : prompt.version;
    return this;
  }

  get traceId(): string {
    return this.trace.traceId;
  }

  get ended(): boolean {
    return this.endTime !== undefined;
  }

  setInput(input: SpanIO | string): this {
    this.input = asIO(input);
    return this;
  }

  setOutput(output: SpanIO | string): this {
    this.output = asIO(output);
    return this;
  }

  /** Merges metrics: model, provider, tokens, cost, latencyMs, ttftMs. */
  setMetrics(metrics: SpanMetrics): this {
    Object.assign(this.metrics, metrics);
    if (this.metrics.totalTokens === undefined && metrics.inputTokens !== undefined && metrics.outputTokens !== undefined) {
      this.metrics.totalTokens = metrics.inputTokens + metrics.outputTokens;
    }
    return this;
  }

  setAttribute(key: string, value: unknown): this {
    this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Record<string, unknown>): this {
    Object.assign(this.attributes, attributes);
    return this;
  }

  setStatus(status: SpanStatus, statusMessage?: string): this {
    this.status = status;
    this.statusMessage = statusMessage;
    return this;
  }

  addEvent(name: string, attributes?: Record<string, unknown>): this {
    this.events.push({ name, timestamp: nowIso(), ...(attributes ? { attributes } : {}) });
    return this;
  }

  /**
   * Scores this span (its trace and span ids): sent with the spans' batches, before or after
   * the span ends. Answers the score's id (re-send it in `options.id` to correct the score).
   */
  score(name: string, value: number | string | boolean, options: ScoreOptions = {}): string {
    return this.scoreSink({ ...options, name, value, traceId: this.trace.traceId, spanId: this.spanId });
  }

  /** Ends the span and hands it to the transport. A second call does nothing. */
  end(options: EndOptions = {}): void {
    if (this.ended) return;
    const endMono = monotonicMs();
    this.durationMs = endMono - this.startMono;
    this.endTime = isoAt(endMono);
    if (options.status) this.setStatus(options.status, options.statusMessage);
    else if (options.statusMessage !== undefined) this.statusMessage = options.statusMessage;
    if (options.output !== undefined) this.setOutput(options.output);
    this.metrics.latencyMs ??= this.durationMs;
    this.sink(this);
  }

  /** The span as POST /api/traces takes it (only once ended). */
  toPayload(): SpanPayload {
    const {
      model,
      provider,
      inputTokens,
      outputTokens,
      totalTokens,
      cacheReadTokens,
      cacheWriteTokens,
      reasoningTokens,
      costUsd,
      latencyMs,
      ttftMs,
    } = this.metrics;
    // The span shape has no latency field (its duration is durationMs): it travels in metadata.
    const metadata = toJsonObject({ ...this.metadata, ...(latencyMs !== undefined ? { latencyMs } : {}) });
    const attributes = toJsonObject(this.attributes);
    return {
      spanId: this.spanId,
      ...(this.parentSpanId ? { parentSpanId: this.parentSpanId } : {}),
      name: this.name,
      kind: this.kind,
      ...(this.input ? { input: toJsonSafe(this.input) as SpanIO } : {}),
      ...(this.output ? { output: toJsonSafe(this.output) as SpanIO } : {}),
      startTime: this.startTime,
      endTime: this.endTime ?? this.startTime,
      durationMs: this.durationMs ?? 0,
      ...(model !== undefined ? { model } : {}),
      ...(provider !== undefined ? { provider } : {}),
      ...(inputTokens !== undefined ? { inputTokens } : {}),
      ...(outputTokens !== undefined ? { outputTokens } : {}),
      ...(totalTokens !== undefined ? { totalTokens } : {}),
      ...(cacheReadTokens !== undefined ? { cacheReadTokens } : {}),
      ...(cacheWriteTokens !== undefined ? { cacheWriteTokens } : {}),
      ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(ttftMs !== undefined ? { ttftMs } : {}),
      status: this.status,
      ...(this.statusMessage !== undefined ? { statusMessage: this.statusMessage } : {}),
      ...(attributes && Object.keys(attributes).length > 0 ? { attributes } : {}),
      ...(this.events.length > 0 ? { events: toJsonSafe(this.events) as SpanEvent[] } : {}),
      ...(metadata && Object.keys(metadata).length > 0 ? { metadata } : {}),
      ...(this.promptName !== undefined ? { promptName: this.promptName } : {}),
      ...(this.promptVersion !== undefined ? { promptVersion: this.promptVersion } : {}),
    };
  }
}

/** The message of anything thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
