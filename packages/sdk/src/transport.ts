import { LoupeError } from './errors.js';
import { httpError, request, retryAfterMs } from './http.js';
import type { ResolvedOptions } from './options.js';
import type { Span, TraceInfo } from './span.js';
import type { IngestResult, SpanPayload, TracePayload } from './types.js';

interface QueuedSpan {
  trace: TraceInfo;
  span: SpanPayload;
}

export interface TransportStats {
  /** Spans waiting to be sent. */
  queued: number;
  /** Spans the service accepted. */
  sent: number;
  /** Spans in traces the service refused as invalid. */
  rejected: number;
  /** Spans lost: queue overflow or retries spent. */
  dropped: number;
  /** HTTP requests made, retries included. */
  requests: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Buffers ended spans and sends them to POST /api/traces, grouped by trace, as SPEC.md's
 * client transport conventions say. Nothing here throws into the application: every
 * failure goes to onError.
 */
export class SpanTransport {
  private queue: QueuedSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private droppedUnreported = 0;
  private readonly counters = { sent: 0, rejected: 0, dropped: 0, requests: 0 };

  constructor(private readonly options: ResolvedOptions) {
    if (options.enabled) {
      this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
      // The interval alone must not keep a finished program alive; shutdown() sends the rest.
      this.timer.unref();
    }
  }

  stats(): TransportStats {
    return { queued: this.queue.length, ...this.counters };
  }

  add(span: Span): void {
    if (!this.options.enabled) return;
    // Snapshot now: the application may keep touching the object after end().
    this.queue.push({ trace: span.trace, span: span.toPayload() });
    if (this.queue.length > this.options.maxQueueSize) {
      const over = this.queue.length - this.options.maxQueueSize;
      this.queue.splice(0, over);
      this.counters.dropped += over;
      this.droppedUnreported += over;
    }
    if (this.queue.length >= this.options.batchSize && !this.draining) void this.flush();
  }

  /** Sends everything queued; resolves once done (sent, rejected or given up). Never rejects. */
  flush(): Promise<void> {
    if (this.draining) return this.draining;
    if (this.queue.length === 0) return Promise.resolve();
    // drain() awaits a request before anything else, so the assignment lands before its end.
    this.draining = this.drain();
    return this.draining;
  }

  /** Stops the timer, sends all that remains and waits for it. */
  async shutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // A drain in progress may have started before the last spans were queued.
    await this.flush();
    if (this.queue.length > 0) await this.flush();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        if (this.droppedUnreported > 0) {
          const n = this.droppedUnreported;
          this.droppedUnreported = 0;
          this.report(
            new LoupeError('dropped', `${n} span(s) dropped: the queue held more than ${this.options.maxQueueSize}`, { spanCount: n }),
          );
        }
        await this.send(this.queue.splice(0, this.options.batchSize));
      }
    } finally {
      // Cleared in the same step that saw the queue empty: a span queued after it starts a new drain.
      this.draining = undefined;
    }
  }

  private async send(batch: QueuedSpan[]): Promise<void> {
    const traces = groupByTrace(batch, this.options);
    const path = '/api/traces';
    for (let attempt = 0; ; attempt++) {
      let failure: LoupeError;
      let delay = Math.min(this.options.retryBaseDelayMs * 2 ** attempt, this.options.maxRetryDelayMs);
      let toldToWait: number | undefined;
      try {
        this.counters.requests++;
        const answer = await request(this.options, 'POST', path, { traces });
        if (answer.status >= 200 && answer.status < 300) {
          this.accepted(traces, (answer.body as { data?: IngestResult } | undefined)?.data);
          return;
        }
        failure = httpError('POST', path, answer, batch.length);
        if (!retriable(answer.status)) {
          // A validation failure (or a bad key) will fail again the same way.
          this.counters.rejected += batch.length;
          this.report(
            new LoupeError(
              answer.status === 400 ? 'rejected' : 'http',
              `${batch.length} span(s) not sent: ${failure.message}`,
              failure.details,
            ),
          );
          return;
        }
        if (answer.status === 429) toldToWait = retryAfterMs(answer.headers);
      } catch (error) {
        failure = error instanceof LoupeError ? error : new LoupeError('network', String(error), { cause: error });
      }
      // A Retry-After beyond maxRetryDelayMs (a daily limit) would hold shutdown() that long: give up now.
      const tooLong = toldToWait !== undefined && toldToWait > this.options.maxRetryDelayMs;
      delay = toldToWait ?? delay;
      if (attempt >= this.options.maxRetries || tooLong) {
        this.counters.dropped += batch.length;
        const why = tooLong ? `told to wait ${Math.ceil(delay / 1000)} s` : `after ${attempt + 1} attempts`;
        this.report(
          new LoupeError('dropped', `${batch.length} span(s) dropped ${why}: ${failure.message}`, {
            ...failure.details,
            spanCount: batch.length,
          }),
        );
        return;
      }
      await sleep(delay);
    }
  }

  private accepted(traces: TracePayload[], result: IngestResult | undefined): void {
    const errors = result?.errors ?? [];
    const refused = new Set(errors.map((e) => e.index));
    let rejectedSpans = 0;
    traces.forEach((trace, index) => {
      if (refused.has(index)) rejectedSpans += trace.spans.length;
      else this.counters.sent += trace.spans.length;
    });
    if (errors.length === 0) return;
    this.counters.rejected += rejectedSpans;
    const first = errors[0]!;
    this.report(
      new LoupeError(
        'rejected',
        `${refused.size} trace(s) refused as invalid, e.g. ${first.traceId ?? ''} ${first.path}: ${first.message}`,
        {
          errors,
          spanCount: rejectedSpans,
        },
      ),
    );
  }

  private report(error: LoupeError): void {
    try {
      this.options.onError(error);
    } catch {
      // The application's hook failing is not the application's problem either.
    }
  }
}

function retriable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function groupByTrace(batch: QueuedSpan[], options: ResolvedOptions): TracePayload[] {
  const traces = new Map<string, TracePayload>();
  for (const { trace, span } of batch) {
    let payload = traces.get(trace.traceId);
    if (!payload) {
      payload = {
        traceId: trace.traceId,
        ...(trace.name ? { name: trace.name } : {}),
        ...(trace.sessionId ? { sessionId: trace.sessionId } : {}),
        source: options.source,
        ...(options.environment ? { environment: options.environment } : {}),
        spans: [],
      };
      traces.set(trace.traceId, payload);
    }
    payload.spans.push(span);
  }
  return [...traces.values()];
}
