import { LoupeError } from './errors.js';
import { httpError, request, retryAfterMs } from './http.js';
import type { ResolvedOptions } from './options.js';
import type { Span, TraceInfo } from './span.js';
import type { ScoreIngestResult, ScorePayload } from './scores.js';
import type { IngestResult, SpanPayload, TracePayload } from './types.js';

interface QueuedSpan {
  trace: TraceInfo;
  span: SpanPayload;
  /** The span's serialized size in bytes, measured once when first taken. */
  bytes?: number;
}

/**
 * The most one request to POST /api/traces carries when spans back up: well under the
 * service's default body limit (LOUPE_BODY_LIMIT, 10 MiB), and few enough spans that no trace
 * in it comes near the service's spans-per-trace limit. A single span larger than this still
 * goes, alone.
 */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
export const MAX_REQUEST_SPANS = 1000;
/** The most one request to POST /api/scores carries when scores back up: the service's bound (1,000), within MAX_REQUEST_BYTES. */
export const MAX_REQUEST_SCORES = 1000;

export interface TransportStats {
  /** Spans waiting to be sent. */
  queued: number;
  /** Spans the service accepted. */
  sent: number;
  /** Spans in traces the service refused as invalid. */
  rejected: number;
  /** Spans lost: queue overflow or retries spent. */
  dropped: number;
  /** HTTP requests made, retries included (spans' and scores'). */
  requests: number;
  /** Scores (loupe.score, span.score): waiting, accepted, refused as invalid, lost. */
  scores: { queued: number; sent: number; rejected: number; dropped: number };
}

/** What one kind of item (spans, scores) needs from the shared retry loop. */
interface Shipment {
  path: string;
  body: unknown;
  count: number;
  noun: 'span' | 'score';
  counters: { sent: number; rejected: number; dropped: number };
  /** Counts what a 2xx answer accepted and reports what it refused. */
  accepted: (body: unknown) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Buffers ended spans and sends them to POST /api/traces, grouped by trace, as SPEC.md's
 * client transport conventions say; scores ride along to POST /api/scores with the same
 * batching, retries and shutdown flush. Nothing here throws into the application: every
 * failure goes to onError.
 */
export class SpanTransport {
  private queue: QueuedSpan[] = [];
  private scoreQueue: ScorePayload[] = [];
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private droppedUnreported = 0;
  private scoresDroppedUnreported = 0;
  private readonly counters = { sent: 0, rejected: 0, dropped: 0, requests: 0 };
  private readonly scoreCounters = { sent: 0, rejected: 0, dropped: 0 };

  constructor(private readonly options: ResolvedOptions) {
    if (options.enabled) {
      this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
      // The interval alone must not keep a finished program alive; shutdown() sends the rest.
      this.timer.unref();
    }
  }

  stats(): TransportStats {
    return { queued: this.queue.length, ...this.counters, scores: { queued: this.scoreQueue.length, ...this.scoreCounters } };
  }

  /** Queues a score (already snapshotted as its payload). */
  addScore(score: ScorePayload): void {
    if (!this.options.enabled) return;
    this.scoreQueue.push(score);
    if (this.scoreQueue.length > this.options.maxQueueSize) {
      const over = this.scoreQueue.length - this.options.maxQueueSize;
      this.scoreQueue.splice(0, over);
      this.scoreCounters.dropped += over;
      this.scoresDroppedUnreported += over;
    }
    if (this.scoreQueue.length >= this.options.batchSize && !this.draining) void this.flush();
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
    if (this.queue.length === 0 && this.scoreQueue.length === 0) return Promise.resolve();
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
    if (this.queue.length > 0 || this.scoreQueue.length > 0) await this.flush();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0 || this.scoreQueue.length > 0) {
        if (this.droppedUnreported > 0) {
          const n = this.droppedUnreported;
          this.droppedUnreported = 0;
          this.report(
            new LoupeError('dropped', `${n} span(s) dropped: the queue held more than ${this.options.maxQueueSize}`, { spanCount: n }),
          );
        }
        if (this.scoresDroppedUnreported > 0) {
          const n = this.scoresDroppedUnreported;
          this.scoresDroppedUnreported = 0;
          this.report(
            new LoupeError('dropped', `${n} score(s) dropped: the queue held more than ${this.options.maxQueueSize}`, { scoreCount: n }),
          );
        }
        // Spans first: a score may come before its trace, but its trace usually should not wait.
        if (this.queue.length > 0) await this.sendSpans(this.takeSpans());
        else await this.sendScores(this.takeScores());
      }
    } finally {
      // Cleared in the same step that saw the queue empty: a span queued after it starts a new drain.
      this.draining = undefined;
    }
  }

  /**
   * The next request's spans: all that wait, up to MAX_REQUEST_SPANS (or batchSize when
   * larger) and MAX_REQUEST_BYTES of JSON. The size counted is an upper bound of the body
   * groupByTrace builds: each trace's fields once, each span, and a separator for each.
   */
  private takeSpans(): QueuedSpan[] {
    const maxSpans = Math.max(this.options.batchSize, MAX_REQUEST_SPANS);
    const traces = new Set<string>();
    let bytes = '{"traces":[]}'.length;
    let n = 0;
    for (; n < this.queue.length && n < maxSpans; n++) {
      const queued = this.queue[n]!;
      queued.bytes ??= Buffer.byteLength(JSON.stringify(queued.span)) + 1;
      let size = queued.bytes;
      if (!traces.has(queued.trace.traceId)) size += Buffer.byteLength(JSON.stringify(traceFields(queued.trace, this.options))) + 1;
      // The first span always goes, so that one too large for any request cannot hold the rest.
      if (n > 0 && bytes + size > MAX_REQUEST_BYTES) break;
      bytes += size;
      traces.add(queued.trace.traceId);
    }
    return this.queue.splice(0, n);
  }

  /**
   * The next request's scores: all that wait, up to MAX_REQUEST_SCORES and MAX_REQUEST_BYTES of
   * JSON (the first always goes), as a backlog of spans goes (`takeSpans`).
   */
  private takeScores(): ScorePayload[] {
    let bytes = '{"scores":[]}'.length;
    let n = 0;
    for (; n < this.scoreQueue.length && n < MAX_REQUEST_SCORES; n++) {
      const size = Buffer.byteLength(JSON.stringify(this.scoreQueue[n])) + 1;
      if (n > 0 && bytes + size > MAX_REQUEST_BYTES) break;
      bytes += size;
    }
    return this.scoreQueue.splice(0, n);
  }

  private sendSpans(batch: QueuedSpan[]): Promise<void> {
    const traces = groupByTrace(batch, this.options);
    return this.send({
      path: '/api/traces',
      body: { traces },
      count: batch.length,
      noun: 'span',
      counters: this.counters,
      accepted: (body) => this.accepted(traces, (body as { data?: IngestResult } | undefined)?.data),
    });
  }

  private sendScores(batch: ScorePayload[]): Promise<void> {
    return this.send({
      path: '/api/scores',
      body: { scores: batch },
      count: batch.length,
      noun: 'score',
      counters: this.scoreCounters,
      accepted: (body) => this.scoresAccepted(batch, (body as { data?: ScoreIngestResult } | undefined)?.data),
    });
  }

  /** One request with its retries: backoff, Retry-After, give up after maxRetries. */
  private async send(shipment: Shipment): Promise<void> {
    const { path, count, noun, counters } = shipment;
    const countDetail = noun === 'span' ? { spanCount: count } : { scoreCount: count };
    for (let attempt = 0; ; attempt++) {
      let failure: LoupeError;
      let delay = Math.min(this.options.retryBaseDelayMs * 2 ** attempt, this.options.maxRetryDelayMs);
      let toldToWait: number | undefined;
      try {
        this.counters.requests++;
        const answer = await request(this.options, 'POST', path, shipment.body);
        if (answer.status >= 200 && answer.status < 300) {
          shipment.accepted(answer.body);
          return;
        }
        failure = httpError('POST', path, answer, noun === 'span' ? count : undefined);
        if (!retriable(answer.status)) {
          // A validation failure (or a bad key) will fail again the same way.
          counters.rejected += count;
          this.report(
            new LoupeError(answer.status === 400 ? 'rejected' : 'http', `${count} ${noun}(s) not sent: ${failure.message}`, {
              ...failure.details,
              ...countDetail,
            }),
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
        counters.dropped += count;
        const why = tooLong ? `told to wait ${Math.ceil(delay / 1000)} s` : `after ${attempt + 1} attempts`;
        this.report(
          new LoupeError('dropped', `${count} ${noun}(s) dropped ${why}: ${failure.message}`, {
            ...failure.details,
            ...countDetail,
          }),
        );
        return;
      }
      await sleep(delay);
    }
  }

  private scoresAccepted(batch: ScorePayload[], result: ScoreIngestResult | undefined): void {
    const errors = result?.errors ?? [];
    this.scoreCounters.sent += batch.length - errors.length;
    if (errors.length === 0) return;
    this.scoreCounters.rejected += errors.length;
    const first = errors[0]!;
    this.report(
      new LoupeError('rejected', `${errors.length} score(s) refused as invalid, e.g. ${first.path}: ${first.message}`, {
        scoreErrors: errors,
        scoreCount: errors.length,
      }),
    );
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
      payload = traceFields(trace, options);
      traces.set(trace.traceId, payload);
    }
    payload.spans.push(span);
  }
  return [...traces.values()];
}

/** A trace's payload without its spans yet. */
function traceFields(trace: TraceInfo, options: ResolvedOptions): TracePayload {
  return {
    traceId: trace.traceId,
    ...(trace.name ? { name: trace.name } : {}),
    ...(trace.sessionId ? { sessionId: trace.sessionId } : {}),
    source: options.source,
    ...(options.environment ? { environment: options.environment } : {}),
    spans: [],
  };
}
