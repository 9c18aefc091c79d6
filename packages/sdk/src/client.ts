import { AsyncLocalStorage } from 'node:async_hooks';
import { resolveOptions, type LoupeOptions, type ResolvedOptions } from './options.js';
import { PromptClient, render, type GetPromptOptions, type Prompt, type RenderedPrompt } from './prompts.js';
import { scorePayload, type ScoreInput } from './scores.js';
import { CodingSession, type CodingSessionOptions } from './session.js';
import { runExperiment, type ExperimentOptions, type ExperimentSummary } from './experiment.js';
import { errorMessage, Span, type SpanOptions } from './span.js';
import { SpanTransport, type TransportStats } from './transport.js';
import type { PromptRecord, SpanIO } from './types.js';

/** The active span travels with the async context: awaits, timers and Promise.all branches keep it. */
const activeSpan = new AsyncLocalStorage<Span>();

export interface WrapOptions extends SpanOptions {
  /** Span name; default the function's name. */
  name?: string;
  /** Record the arguments as input.raw (default true). */
  captureInput?: boolean;
  /** Record the return value as output.raw (default true). */
  captureOutput?: boolean;
}

type AnyFunction = (...args: never[]) => unknown;

/** The reference client: spans, their transport, prompts and the coding-assistant session convention. */
export class Loupe {
  readonly options: ResolvedOptions;
  private readonly transport: SpanTransport;
  /** Prompts by name, label or version, cached: `loupe.prompts.get('support', { label: 'production' })`. */
  readonly prompts: PromptClient;

  constructor(options: LoupeOptions = {}) {
    this.options = resolveOptions(options);
    this.transport = new SpanTransport(this.options);
    this.prompts = new PromptClient(this.options);
  }

  /** The span active in this async context, if any. */
  currentSpan(): Span | undefined {
    return activeSpan.getStore();
  }

  /**
   * Starts a span (not made active: see withSpan). Its parent is `options.parent`, else the
   * active span; with neither it roots a new trace.
   */
  startSpan(name: string, options: SpanOptions = {}): Span {
    const parent = options.parent === null ? undefined : (options.parent ?? activeSpan.getStore());
    return new Span(
      name,
      { ...options, parent, sessionId: options.sessionId ?? this.options.sessionId },
      (span) => this.transport.add(span),
      (score) => this.score(score),
    );
  }

  /**
   * Queues a score on a trace (`traceId`), a span (`traceId` + `spanId`) or a session
   * (`sessionId`), sent to POST /api/scores (source `sdk`) with the spans' batching, retries
   * and shutdown flush. Answers the score's id: re-sending it (`id`) corrects the score.
   * Never throws: a score the service refuses goes to onError.
   */
  score(input: ScoreInput): string {
    const payload = scorePayload(input, this.options.environment);
    this.transport.addScore(payload);
    return payload.id;
  }

  /** Runs fn with `span` active; the span is not ended. */
  runInSpan<R>(span: Span, fn: () => R): R {
    return activeSpan.run(span, fn);
  }

  /**
   * Runs fn inside a new active span and ends it: status ok when fn returns (or its promise
   * resolves), error with the message when it throws (or rejects); the error is rethrown.
   */
  withSpan<R>(name: string, fn: (span: Span) => R): R;
  withSpan<R>(name: string, options: SpanOptions, fn: (span: Span) => R): R;
  withSpan<R>(name: string, a: SpanOptions | ((span: Span) => R), b?: (span: Span) => R): R {
    const options = typeof a === 'function' ? {} : a;
    const fn = typeof a === 'function' ? a : b!;
    const span = this.startSpan(name, options);
    return activeSpan.run(span, () => settle(span, () => fn(span), undefined));
  }

  /** A function that runs `fn` as withSpan does, recording arguments and result. */
  wrap<F extends AnyFunction>(fn: F, options: WrapOptions = {}): F {
    // The wrapper is a plain function so that it passes its own `this` on to fn; the client is
    // reached through this name instead.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const client = this;
    const { name = fn.name || 'anonymous', captureInput = true, captureOutput = true, ...spanOptions } = options;
    return function (this: unknown, ...args: Parameters<F>) {
      const span = client.startSpan(name, {
        ...spanOptions,
        ...(captureInput && spanOptions.input === undefined ? { input: { raw: args } } : {}),
      });
      return activeSpan.run(span, () => settle(span, () => fn.apply(this, args), captureOutput ? (value) => ({ raw: value }) : undefined));
    } as F;
  }

  /** Starts the coding-assistant session convention: root agent span, turns, tools, sub-agents. */
  session(options: CodingSessionOptions = {}): CodingSession {
    return new CodingSession(this, options);
  }

  /** The latest version of a prompt, or `options.version`; cached (see GetPromptOptions). */
  getPrompt(name: string, options?: GetPromptOptions): Promise<Prompt> {
    return this.prompts.get(name, options);
  }

  /** Forgets cached prompts. */
  invalidatePrompts(name?: string): void {
    this.prompts.invalidate(name);
  }

  render(prompt: Pick<PromptRecord, 'systemPrompt' | 'humanPrompt'>, variables?: Record<string, unknown>): RenderedPrompt {
    return render(prompt, variables);
  }

  /**
   * Runs `task` over a dataset's items as a run of it (experiment.ts): each item traced, its
   * evaluators' scores recorded on its trace, a failure recorded on its item; prints and
   * resolves with the run's figures.
   */
  experiment(options: ExperimentOptions): Promise<ExperimentSummary> {
    return runExperiment(this, options);
  }

  /** Sends what is queued now; resolves when done. Never rejects: failures go to onError. */
  flush(): Promise<void> {
    return this.transport.flush();
  }

  /** Stops the flush timer, sends all that remains and waits for it. */
  shutdown(): Promise<void> {
    return this.transport.shutdown();
  }

  stats(): TransportStats {
    return this.transport.stats();
  }
}

/** Ends the span after fn, sync or async, by the status rules of SPEC.md. */
function settle<R>(span: Span, fn: () => R, outputOf: ((value: unknown) => SpanIO) | undefined): R {
  const succeed = (value: unknown) => {
    if (outputOf && span.output === undefined && value !== undefined) span.setOutput(outputOf(value));
    // A status the function set itself wins.
    span.end({ status: span.status === 'unset' ? 'ok' : span.status, statusMessage: span.statusMessage });
  };
  const fail = (error: unknown) => span.end({ status: 'error', statusMessage: errorMessage(error) });
  let result: R;
  try {
    result = fn();
  } catch (error) {
    fail(error);
    throw error;
  }
  if (isThenable(result)) {
    return result.then(
      (value) => {
        succeed(value);
        return value;
      },
      (error: unknown) => {
        fail(error);
        throw error;
      },
    ) as R;
  }
  succeed(result);
  return result;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
