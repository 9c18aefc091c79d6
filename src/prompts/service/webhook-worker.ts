import type postgres from 'postgres';
import type { Sql } from '../../stores/postgres.js';
import type { TargetGuard } from '../../egress/target-guard.js';
import { describeRequestError } from '../../egress/request-error.js';
import { postWebhook, type SendOutcome } from './webhook-send.js';
import { signatureHeader } from '../model/webhook-signature.js';
import { createQueueWorkerLoop } from '../../stores/queue-worker.js';

export interface RetryPolicy {
  /** Attempts in all, the first included; after the last failure the delivery is `failed`. */
  maxAttempts: number;
  /** Wait after the first failed attempt; it doubles after each further one. */
  baseDelayMs: number;
  /** The longest wait between two attempts. */
  maxDelayMs: number;
}

/** 10 attempts over about 85 minutes: 10 s, 20 s, 40 s, … 2,560 s between them. */
export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 10, baseDelayMs: 10_000, maxDelayMs: 3_600_000 };

/** The wait before attempt `attempts + 1`, after `attempts` failed ones. */
export function retryDelayMs(policy: RetryPolicy, attempts: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
}

export interface WebhookWorkerOptions {
  sql: Sql;
  /** Judges each target before it is reached (src/egress/target-guard.ts). */
  guard: TargetGuard;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  retry?: RetryPolicy;
  /** How long an idle worker waits before looking for due deliveries again. */
  pollIntervalMs?: number;
  /** Deliveries sent at once by this worker; each holds one database connection while it runs. */
  concurrency?: number;
  /** Bound on one whole request: connect, send, answer. */
  timeoutMs?: number;
  /** Consecutive failed attempts after which an endpoint is marked `failing`. */
  failingAfter?: number;
  /** The signing clock, in milliseconds (tests pass a fixed one). */
  now?: () => number;
}

export interface WebhookWorker {
  start(): void;
  /** Stops claiming, waits for deliveries in flight, resolves when idle. */
  stop(): Promise<void>;
  /** Delivers everything due now (in this worker), answering how many attempts were made. */
  runOnce(): Promise<number>;
}

interface ClaimedDelivery {
  id: string;
  attempts: number;
  webhookId: string;
  url: string;
  secret: string;
  eventId: string;
  type: string;
  data: unknown;
  workspaceId: string;
  createdAt: Date;
}

/**
 * The outbox's consumer; one runs in every replica. A delivery is claimed with
 * `FOR UPDATE SKIP LOCKED` in a transaction held while it is sent: no two workers send it at
 * once, and if the process dies mid-send the database ends the transaction and the row is
 * due again at once for any other worker (or this one after a restart). Only a crash between
 * a receiver's 2xx and the commit repeats a delivery; the Idempotency-Key lets receivers drop it.
 */
export function createWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { sql } = options;
  const retry = options.retry ?? defaultRetryPolicy;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const concurrency = options.concurrency ?? 4;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const failingAfter = options.failingAfter ?? 5;
  const now = options.now ?? Date.now;

  /** Claims, sends and records one due delivery; false when none is due. */
  const deliverOne = () =>
    sql.begin(async (tx) => {
      const [d] = await tx<ClaimedDelivery[]>`
        select d.id, d.attempts, w.id as "webhookId", w.url, w.secret, e.id as "eventId", e.type, e.data,
          e.workspace_id as "workspaceId", e.created_at as "createdAt"
        from webhook_deliveries d
          join webhook_events e on e.id = d.event_id
          join webhooks w on w.id = d.webhook_id
        where d.status = 'pending' and d.next_attempt_at <= now()
        order by d.next_attempt_at
        limit 1
        for update of d skip locked`;
      if (!d) return false;
      const body = JSON.stringify({
        id: d.eventId,
        type: d.type,
        createdAt: d.createdAt.toISOString(),
        workspaceId: d.workspaceId,
        data: d.data,
      });
      const headers = {
        'user-agent': 'Loupe-Webhooks/1',
        'x-loupe-event': d.type,
        'x-loupe-delivery': d.id,
        'idempotency-key': d.eventId,
        'x-loupe-signature': signatureHeader(d.secret, body, Math.floor(now() / 1000)),
      };
      let outcome: SendOutcome;
      try {
        outcome = await postWebhook(d.url, body, headers, { timeoutMs, guard: options.guard });
      } catch (error) {
        outcome = { ok: false, statusCode: null, excerpt: null, error: describeRequestError(error) };
      }
      await recordOutcome(tx, d, outcome);
      return true;
    });

  async function recordOutcome(tx: postgres.TransactionSql, d: ClaimedDelivery, outcome: SendOutcome) {
    const attempts = d.attempts + 1;
    if (outcome.ok) {
      await tx`
        update webhook_deliveries set status = 'delivered', attempts = ${attempts}, last_attempt_at = now(), delivered_at = now(),
          last_status_code = ${outcome.statusCode}, last_error = null, last_response_excerpt = ${outcome.excerpt}
        where id = ${d.id}`;
      await tx`update webhooks set consecutive_failures = 0, status = 'active' where id = ${d.webhookId}`;
      return;
    }
    const exhausted = attempts >= retry.maxAttempts;
    await tx`
      update webhook_deliveries set
        status = ${exhausted ? 'failed' : 'pending'}, attempts = ${attempts}, last_attempt_at = now(),
        next_attempt_at = now() + make_interval(secs => ${retryDelayMs(retry, attempts) / 1000}),
        last_status_code = ${outcome.statusCode}, last_error = ${outcome.error?.slice(0, 500) ?? null},
        last_response_excerpt = ${outcome.excerpt}
      where id = ${d.id}`;
    await tx`
      update webhooks set consecutive_failures = consecutive_failures + 1,
        status = case when consecutive_failures + 1 >= ${failingAfter} then 'failing' else status end
      where id = ${d.webhookId}`;
  }

  const worker = createQueueWorkerLoop({
    concurrency,
    pollIntervalMs,
    takeOne: deliverOne,
    onRoundError: (error, failedRounds) => options.log?.error({ err: error, failedRounds }, 'webhook delivery round failed'),
    onRecovered: (failedRounds) => options.log?.warn({ failedRounds }, 'webhook delivery rounds succeed again'),
  });
  return worker;
}
