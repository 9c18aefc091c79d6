import type postgres from 'postgres';
import type { Sql } from '../../stores/postgres.js';
import type { EvaluationTraces } from '../../contract/evaluation-targets.js';
import type { RecordEvaluationScore } from '../../contract/evaluation-scores.js';
import {
  selectActiveEvaluators,
  selectEvaluator,
  selectScannedFrom,
  advanceScannedFrom,
  type StoredEvaluator,
} from '../tables/evaluators-table.js';
import { claimDueJob, enqueueJobs, markJobDone, markJobFailed, type ClaimedJob } from '../tables/jobs-table.js';
import { evaluateTarget, isSampled, type EvaluateDeps } from './evaluate.js';
import { createQueueWorkerLoop } from '../../stores/queue-worker.js';

export interface RetryPolicy {
  /** Attempts in all, the first included; after the last transient failure the job is `failed`. */
  maxAttempts: number;
  /** Wait after the first failed attempt; it doubles after each further one. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/** 6 attempts over about 5 minutes: 10 s, 20 s, 40 s, 80 s, 160 s between them. */
export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 6, baseDelayMs: 10_000, maxDelayMs: 600_000 };

export const retryDelayMs = (policy: RetryPolicy, attempts: number) =>
  Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));

/**
 * A trace that has not ended this long after it started is taken as abandoned: the scan moves
 * past it rather than waiting for it for ever (it is still judged if found ended later within
 * the page of a scan).
 */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;
/** Traces looked at per evaluator per scan. */
const SCAN_PAGE = 100;

export interface EvaluatorWorkerOptions extends EvaluateDeps {
  sql: Sql;
  traces: EvaluationTraces;
  recordScore: RecordEvaluationScore;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  retry?: RetryPolicy;
  pollIntervalMs?: number;
  /** Jobs run at once by this worker, over all workspaces. */
  concurrency?: number;
  /** Jobs of one workspace run at once by this worker, so one busy workspace never holds every lane. */
  perWorkspaceConcurrency?: number;
  now?: () => number;
}

export interface EvaluatorWorker {
  start(): void;
  stop(): Promise<void>;
  /** Looks for new targets of every active evaluator; answers how many jobs were queued. */
  scan(): Promise<number>;
  /** Runs every due job (in this worker); answers how many were run. */
  runOnce(): Promise<number>;
}

/**
 * The evaluators' queue consumer and target scanner; one runs in every replica. Jobs are
 * claimed like webhook deliveries (src/prompts/webhooks/worker.ts): `FOR UPDATE SKIP LOCKED`
 * in a transaction held while the job runs, so a dead worker's job is due again at once, and
 * the job's unique key (evaluator, version, trace) keeps a target from being scored twice.
 * The score's id is the job's id: a job repeated after a crash between the score's write and
 * the commit corrects its score rather than adding a second.
 */
export function createEvaluatorWorker(options: EvaluatorWorkerOptions): EvaluatorWorker {
  const { sql } = options;
  const retry = options.retry ?? defaultRetryPolicy;
  const pollIntervalMs = options.pollIntervalMs ?? 2_000;
  const concurrency = options.concurrency ?? 4;
  const perWorkspace = options.perWorkspaceConcurrency ?? 2;
  const now = options.now ?? Date.now;
  const inFlight = new Map<string, number>();

  async function scanEvaluator(evaluator: StoredEvaluator): Promise<number> {
    const from = await selectScannedFrom(sql, evaluator.id);
    if (!from) return 0;
    const found = await options.traces.findTraces(
      evaluator.workspaceId,
      { ...evaluator.target.filters, startedAfter: from.toISOString() },
      SCAN_PAGE,
    );
    const readyBy = now() - evaluator.target.delaySeconds * 1000;
    const ready: string[] = [];
    let waitingFrom: string | undefined;
    for (const trace of found) {
      if (trace.endTime !== null && Date.parse(trace.endTime) <= readyBy) ready.push(trace.traceId);
      else if (waitingFrom === undefined && Date.parse(trace.startTime) > now() - ABANDONED_AFTER_MS) waitingFrom = trace.startTime;
    }
    const job = { workspaceId: evaluator.workspaceId, evaluatorId: evaluator.id, version: evaluator.version };
    const sampled = ready.filter((id) => isSampled(evaluator.id, id, evaluator.target.samplingRate));
    const queued = await enqueueJobs(sql, { ...job, status: 'pending' }, sampled);
    await enqueueJobs(
      sql,
      { ...job, status: 'skipped' },
      ready.filter((id) => !sampled.includes(id)),
    );
    // The scan starts next at the first trace still waiting, else at the last one seen (found
    // again, it is already queued: the unique key drops it).
    const next = waitingFrom ?? found.at(-1)?.startTime;
    if (next !== undefined) await advanceScannedFrom(sql, evaluator.id, new Date(next));
    return queued;
  }

  async function scan(): Promise<number> {
    let queued = 0;
    for (const evaluator of await selectActiveEvaluators(sql)) {
      try {
        queued += await scanEvaluator(evaluator);
      } catch (error) {
        options.log?.error({ err: error, evaluatorId: evaluator.id }, 'evaluator scan failed');
      }
    }
    return queued;
  }

  async function runJob(tx: postgres.TransactionSql, job: ClaimedJob) {
    const evaluator = await selectEvaluator(sql, job.workspaceId, job.evaluatorId);
    if (!evaluator || evaluator.version !== job.evaluatorVersion) {
      await markJobDone(tx, job.id, { status: 'skipped', scoreId: null, note: 'the evaluator changed before the job ran' });
      return;
    }
    const target = await options.traces.readTrace(job.workspaceId, job.traceId);
    if (!target) {
      await markJobDone(tx, job.id, { status: 'skipped', scoreId: null, note: 'the trace is gone' });
      return;
    }
    let outcome;
    try {
      outcome = await evaluateTarget(options, evaluator, target);
    } catch (error) {
      options.log?.error({ err: error, jobId: job.id }, 'evaluation failed');
      outcome = { ok: false as const, transient: true, error: 'internal error while evaluating' };
    }
    if (!outcome.ok) {
      const attempts = job.attempts + 1;
      const retryAfter = outcome.transient && attempts < retry.maxAttempts ? retryDelayMs(retry, attempts) : null;
      await markJobFailed(tx, job.id, outcome.error, retryAfter);
      return;
    }
    const value = evaluator.score.dataType === 'numeric' && typeof outcome.value === 'boolean' ? Number(outcome.value) : outcome.value;
    const stored = await options.recordScore(job.workspaceId, evaluator.id, {
      id: job.id,
      name: evaluator.score.name,
      dataType: evaluator.score.dataType,
      value,
      comment: outcome.comment.slice(0, 4000),
      traceId: job.traceId,
      metadata: { evaluatorId: evaluator.id, evaluatorVersion: evaluator.version, jobId: job.id },
    });
    if ('error' in stored) await markJobFailed(tx, job.id, `the score was refused: ${stored.error}`, null);
    else await markJobDone(tx, job.id, { status: 'succeeded', scoreId: stored.id, note: null });
  }

  /** Claims and runs one due job of a workspace with a free lane; false when none is due. */
  const runOne = () =>
    sql.begin(async (tx) => {
      const busy = [...inFlight].filter(([, n]) => n >= perWorkspace).map(([w]) => w);
      const job = await claimDueJob(tx, busy);
      if (!job) return false;
      inFlight.set(job.workspaceId, (inFlight.get(job.workspaceId) ?? 0) + 1);
      try {
        await runJob(tx, job);
      } finally {
        const left = (inFlight.get(job.workspaceId) ?? 1) - 1;
        if (left === 0) inFlight.delete(job.workspaceId);
        else inFlight.set(job.workspaceId, left);
      }
      return true;
    });

  const worker = createQueueWorkerLoop({
    concurrency,
    pollIntervalMs,
    takeOne: runOne,
    beforeRound: scan,
    onRoundError: (error, failedRounds) => options.log?.error({ err: error, failedRounds }, 'evaluator round failed'),
    onRecovered: (failedRounds) => options.log?.warn({ failedRounds }, 'evaluator rounds succeed again'),
  });
  return { ...worker, scan };
}
