import type postgres from 'postgres';
import type { Sql } from '../../stores/postgres.js';
import type { RecordEvaluationScore } from '../../contract/evaluation-scores.js';
import {
  selectActiveEvaluators,
  selectEvaluator,
  selectScannedFrom,
  advanceScannedFrom,
  type StoredEvaluator,
} from '../tables/evaluators-table.js';
import { claimDueJob, deferJob, markJobDone, markJobFailed, type ClaimedJob } from '../tables/jobs-table.js';
import type { EvaluationTarget } from '../../contract/evaluation-targets.js';
import { evaluateTarget, type EvaluateDeps, type EvaluationOutcome } from './evaluate.js';
import { findTargets, justBefore, queueTargets, type TargetSources } from './targets.js';
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

export interface EvaluatorWorkerOptions extends EvaluateDeps, TargetSources {
  sql: Sql;
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
    const page = await findTargets(
      options,
      evaluator,
      { after: from.toISOString() },
      { readyBy: now() - evaluator.target.delaySeconds * 1000, abandonedBefore: now() - ABANDONED_AFTER_MS, limit: SCAN_PAGE },
    );
    const { queued } = await queueTargets(sql, evaluator, page.ready);
    // The scan starts next just before the first target still waiting, else at the last one
    // seen (found again, a target is already queued: the unique key drops it).
    const next = page.waitingFrom !== undefined ? justBefore(page.waitingFrom) : page.lastSeen;
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

  /** The job's target: its span, its trace, or a run item's trace with the dataset item. */
  async function readTarget(job: ClaimedJob): Promise<EvaluationTarget | undefined> {
    if (job.spanId !== '') return options.traces.readSpan(job.workspaceId, job.traceId, job.spanId);
    const trace = await options.traces.readTrace(job.workspaceId, job.traceId);
    if (!trace || job.runId === null || job.datasetItemId === null) return trace;
    const item = await options.runs.readItem(job.workspaceId, job.runId, job.datasetItemId);
    if (!item) return undefined;
    return {
      ...trace,
      input: item.input,
      expectedOutput: item.expectedOutput,
      output: item.output === undefined ? trace.output : item.output,
      metadata: { ...item.metadata, ...trace.metadata },
    };
  }

  async function runJob(tx: postgres.TransactionSql, job: ClaimedJob) {
    const evaluator = await selectEvaluator(sql, job.workspaceId, job.evaluatorId);
    if (!evaluator || evaluator.version !== job.evaluatorVersion) {
      await markJobDone(tx, job.id, { status: 'skipped', scoreId: null, note: 'the evaluator changed before the job ran' });
      return;
    }
    const target = await readTarget(job);
    if (!target) {
      // A run item's trace may be recorded before its spans are stored: waited for like a transient failure.
      if (job.runId !== null) await fail(tx, job, { transient: true, error: 'the trace of the run item is not stored (yet)' });
      else await markJobDone(tx, job.id, { status: 'skipped', scoreId: null, note: 'the target is gone' });
      return;
    }
    let outcome: EvaluationOutcome;
    try {
      outcome = await evaluateTarget(options, evaluator, target, job.id);
    } catch (error) {
      options.log?.error({ err: error, jobId: job.id }, 'evaluation failed');
      outcome = { ok: false, transient: true, error: 'internal error while evaluating' };
    }
    if (!outcome.ok) {
      if ('deferMs' in outcome) await deferJob(tx, job.id, outcome.deferMs);
      else await fail(tx, job, outcome);
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
      ...(job.spanId !== '' && { spanId: job.spanId }),
      metadata: {
        evaluatorId: evaluator.id,
        evaluatorVersion: evaluator.version,
        jobId: job.id,
        ...(outcome.judgeTraceId !== undefined && { judgeTraceId: outcome.judgeTraceId }),
        ...(job.runId !== null && { runId: job.runId, datasetItemId: job.datasetItemId }),
      },
    });
    if ('error' in stored) await fail(tx, job, { transient: false, error: `the score was refused: ${stored.error}`, ...outcome });
    else await markJobDone(tx, job.id, { status: 'succeeded', scoreId: stored.id, note: null, judgeTraceId: outcome.judgeTraceId });
  }

  /** A failed attempt: retried with a doubling wait while transient and attempts are left, else failed for good. */
  async function fail(tx: postgres.TransactionSql, job: ClaimedJob, failure: { transient: boolean; error: string; judgeTraceId?: string }) {
    const attempts = job.attempts + 1;
    const retryAfter = failure.transient && attempts < retry.maxAttempts ? retryDelayMs(retry, attempts) : null;
    await markJobFailed(tx, job.id, failure.error, retryAfter, failure.judgeTraceId);
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
    onRoundError: (error) => options.log?.error({ err: error }, 'evaluator round failed'),
  });
  return { ...worker, scan };
}
