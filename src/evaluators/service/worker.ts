import type { Sql } from '../../stores/postgres.js';
import type { RecordEvaluationScore } from '../../contract/evaluation-scores.js';
import {
  selectActiveEvaluators,
  selectEvaluator,
  selectScanMarks,
  advanceScannedFrom,
  advanceScannedVersion,
  type StoredEvaluator,
} from '../tables/evaluators-table.js';
import { claimDueJobs, deferJob, markJobsDone, markJobFailed, type ClaimedJob, type JobEnd } from '../tables/jobs-table.js';
import type { EvaluationTarget } from '../../contract/evaluation-targets.js';
import { evaluateTarget, scoreValueOf, type EvaluateDeps, type EvaluationOutcome } from './evaluate.js';
import { findTargets, justBefore, queueTargets, type TargetSources } from './targets.js';
import { createQueueWorkerLoop } from '../../stores/queue-worker.js';
import { groupCommit } from '../../stores/group-commit.js';
import type { EvaluationPrompt } from '../../contract/evaluation-prompts.js';
import type { ModelConnection } from '../api/schemas.js';
import { openConnection } from './connections.js';
import { shortCache } from './short-cache.js';
import type { IngestActivity } from '../../contract/ingest-activity.js';
import { createIngestYield, defaultIngestYield, type IngestYieldOptions } from './ingest-yield.js';

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
/** Traces (or run items) read per page of a scan, and pages per evaluator per round at most. */
const SCAN_PAGE = 100;
const SCAN_PAGES = 20;
/**
 * How far behind the clock the scan's summary version mark is held at most: a summary becomes
 * readable a little after its version was taken (a flush in another process, a write parsed
 * before a later one stored first, one replayed after a crash), so the scan reads the last
 * half minute's writes again each round rather than step past one of them; the job's key drops
 * what it finds twice.
 */
const SCAN_LOOKBACK_MS = 30_000;

export interface EvaluatorWorkerOptions extends EvaluateDeps, TargetSources {
  sql: Sql;
  recordScore: RecordEvaluationScore;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  retry?: RetryPolicy;
  pollIntervalMs?: number;
  /** Jobs run at once by this worker, over all workspaces (default 128). */
  concurrency?: number;
  /** Jobs of one workspace run at once by this worker (default 64), so one busy workspace never holds every lane. */
  perWorkspaceConcurrency?: number;
  now?: () => number;
  /** How long a claimed job is held before another worker may take it (its worker is taken as dead). */
  leaseMs?: number;
  /** The process's external trace ingest, which the worker yields to while it is busy (`ingest-yield.ts`); absent: never. */
  ingestActivity?: IngestActivity;
  yieldTo?: IngestYieldOptions;
  /** How far behind the clock the scan's version mark is held at most (SCAN_LOOKBACK_MS). */
  scanLookbackMs?: number;
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
 * The evaluators' queue consumer and target scanner; one runs in every replica. A job is claimed
 * with `FOR UPDATE SKIP LOCKED` and leased (its due time moved past the lease) in one short
 * statement, so no database connection is held while a judge answers; a dead worker's job is
 * due again when its lease ends, and only the claim's holder may finish it. The job's unique key
 * (evaluator, version, trace, span) keeps a target from being queued twice, and the score's id
 * is the job's id: a job repeated after a crash between the score's write and the job's end
 * corrects its score rather than adding a second.
 */
export function createEvaluatorWorker(options: EvaluatorWorkerOptions): EvaluatorWorker {
  const { sql } = options;
  const retry = options.retry ?? defaultRetryPolicy;
  const pollIntervalMs = options.pollIntervalMs ?? 2_000;
  // Lanes hold no database connection while a judge answers, and the jobs running at once share
  // their claims, reads and writes (group commit): many lanes are cheap, make the batches larger,
  // and keep a replica busy while real judges take seconds (32 lanes and 2 s a call: 16 jobs/s).
  const concurrency = options.concurrency ?? 128;
  const perWorkspace = options.perWorkspaceConcurrency ?? 64;
  const now = options.now ?? Date.now;
  // A lease outlasts the slowest job: a provider call's bound, twice over, and a minute for the stores.
  const leaseMs = options.leaseMs ?? 2 * options.timeoutMs + 60_000;
  const lookbackMs = options.scanLookbackMs ?? SCAN_LOOKBACK_MS;
  const inFlight = new Map<string, number>();
  const pace = options.ingestActivity && createIngestYield(options.ingestActivity, options.yieldTo ?? defaultIngestYield, now);
  /** Set while the worker stops: a lane waiting for its turn takes no job. */
  let stopping = false;
  // The traces of the jobs running at once are read together: one round trip for many jobs.
  const readTraceOf = groupCommit(async (workspaceId, traceIds: string[]) => {
    const found = await options.traces.readTraces(workspaceId, [...new Set(traceIds)]);
    return traceIds.map((id) => found.get(id));
  });
  const readTrace = (workspaceId: string, traceId: string) => readTraceOf(workspaceId, traceId);
  // The lanes that look for a job while a claim is under way are claimed for together in the
  // next one (one statement for many jobs), each workspace within its room; the jobs claimed
  // are counted as running before any lane looks again.
  const claimFor = groupCommit(async (_key, lanes: null[]) => {
    const jobs = await claimDueJobs(sql, { limit: lanes.length, perWorkspace, running: inFlight, leaseMs });
    for (const job of jobs) inFlight.set(job.workspaceId, (inFlight.get(job.workspaceId) ?? 0) + 1);
    return lanes.map((_, i) => jobs[i]);
  });
  // The jobs that end while an end is being written are ended together in the next statement.
  const endJob = groupCommit(async (_key, ends: { job: ClaimedJob; end: JobEnd }[]) => {
    await markJobsDone(sql, ends);
    return ends.map(() => undefined);
  });
  const markJobDone = (job: ClaimedJob, end: JobEnd) => endJob('', { job, end });
  // What every job of an evaluator reads alike, read once for the jobs of a few seconds: its
  // version's definition, its connection and key (a new key is used within seconds), its prompt.
  const evaluatorOf = shortCache<StoredEvaluator | undefined>(60_000, now);
  const connectionOf = shortCache<{ connection: ModelConnection; apiKey: string }>(5_000, now);
  const promptOf = shortCache<EvaluationPrompt | undefined>(5_000, now);
  const evaluateDeps: EvaluateDeps = {
    ...options,
    open: (workspaceId, connectionId) =>
      connectionOf(`${workspaceId}/${connectionId}`, () => openConnection(options.connections, workspaceId, connectionId)),
    prompts: {
      ...options.prompts,
      resolve: (workspaceId, ref) =>
        promptOf(JSON.stringify([workspaceId, ref.name, ref.label, ref.version]), () => options.prompts.resolve(workspaceId, ref)),
    },
  };

  /**
   * A round of the evaluator's scan. Traces and spans are found by what changed in the trace
   * store: the summaries written after the evaluator's version mark (`scanned_version`), of
   * traces that started after the evaluator was made, so a trace whose start moved back or that
   * was stored after a later-started one is still found. Run items by record time (`scanned_from`).
   */
  async function scanEvaluator(evaluator: StoredEvaluator): Promise<number> {
    const marks = await selectScanMarks(sql, evaluator.id);
    if (!marks) return 0;
    const byChange = evaluator.target.kind !== 'runs';
    const window = byChange
      ? { changedAfter: marks.scannedVersion, startedAfter: evaluator.createdAt }
      : { after: marks.scannedFrom.toISOString() };
    let queued = 0;
    let cursor: string | undefined;
    let waitingFrom: string | undefined;
    let lastSeen: string | undefined;
    let walked = false;
    // Pages until the window ends, at most SCAN_PAGES a round: a busy workspace's new targets
    // are queued as fast as they come, never one page a round (unless ingest is busy: it yields).
    const maxPages = pace?.scanPages(SCAN_PAGES) ?? SCAN_PAGES;
    for (let pages = 0; pages < maxPages; pages += 1) {
      const page = await findTargets(
        options,
        evaluator,
        { ...window, cursor },
        { readyBy: now() - evaluator.target.delaySeconds * 1000, abandonedBefore: now() - ABANDONED_AFTER_MS, limit: SCAN_PAGE },
      );
      queued += (await queueTargets(sql, evaluator, page.ready)).queued;
      lastSeen = page.lastSeen ?? lastSeen;
      waitingFrom ??= page.waitingFrom;
      // Past a target still waiting the walk goes on (a long trace does not hold up those after
      // it; found again later, they are queued already), but the next scan starts before it.
      if (page.next === undefined) {
        walked = true;
        break;
      }
      cursor = page.next;
    }
    // The next scan starts just before the first target still waiting, else just before the
    // last one seen: targets sharing its position are found again, and the unique key drops them.
    const next = waitingFrom ?? lastSeen;
    if (!byChange) {
      if (next !== undefined) await advanceScannedFrom(sql, evaluator.id, new Date(justBefore(next)));
      return queued;
    }
    // A version is the writer's clock in nanoseconds: the mark stays the lookback behind it. A
    // walk that reached the end with nothing waiting read every change up to now: the mark moves
    // up to the lookback even when no summary matched (else a narrow filter on a busy workspace
    // would read ever more changes each round).
    const held = BigInt(Math.floor(now() - lookbackMs)) * 1_000_000n;
    if (waitingFrom === undefined && walked) {
      await advanceScannedVersion(sql, evaluator.id, held);
      return queued;
    }
    if (next === undefined) return queued;
    const before = BigInt(next) - 1n;
    await advanceScannedVersion(sql, evaluator.id, before < held ? before : held);
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
    const trace = await readTrace(job.workspaceId, job.traceId);
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

  async function runJob(job: ClaimedJob) {
    // A version's definition never changes (a change is a new version): kept by id and version.
    const evaluator =
      job.currentVersion === job.evaluatorVersion
        ? await evaluatorOf(`${job.evaluatorId}/${job.evaluatorVersion}`, () => selectEvaluator(sql, job.workspaceId, job.evaluatorId))
        : undefined;
    if (!evaluator || evaluator.version !== job.evaluatorVersion) {
      await markJobDone(job, { status: 'skipped', scoreId: null, note: 'the evaluator changed before the job ran' });
      return;
    }
    const target = await readTarget(job);
    if (!target) {
      // A run item's trace may be recorded before its spans are stored: waited for like a transient failure.
      if (job.runId !== null) await fail(job, { transient: true, error: 'the trace of the run item is not stored (yet)' });
      else await markJobDone(job, { status: 'skipped', scoreId: null, note: 'the target is gone' });
      return;
    }
    let outcome: EvaluationOutcome;
    try {
      outcome = await evaluateTarget(evaluateDeps, evaluator, target, job.id);
    } catch (error) {
      options.log?.error({ err: error, jobId: job.id }, 'evaluation failed');
      outcome = { ok: false, transient: true, error: 'internal error while evaluating' };
    }
    if (!outcome.ok) {
      if ('deferMs' in outcome) await deferJob(sql, job, outcome.deferMs);
      else await fail(job, outcome);
      return;
    }
    const value = scoreValueOf(evaluator.score.dataType, outcome.value);
    const stored = await options.recordScore(job.workspaceId, evaluator.id, {
      id: job.id,
      name: evaluator.score.name,
      dataType: evaluator.score.dataType,
      value,
      comment: outcome.comment.slice(0, 4000),
      traceId: job.traceId,
      ...(job.spanId !== '' && { spanId: job.spanId }),
      ...(outcome.judgeTraceId !== undefined && { evalTraceId: outcome.judgeTraceId }),
      // A score is written only by its job, and every claim counts an attempt: before the
      // second, no score of this id exists.
      firstWrite: job.attempts === 1,
      metadata: {
        evaluatorId: evaluator.id,
        evaluatorVersion: evaluator.version,
        jobId: job.id,
        ...(job.runId !== null && { runId: job.runId, datasetItemId: job.datasetItemId }),
      },
    });
    if ('error' in stored) await fail(job, { transient: false, error: `the score was refused: ${stored.error}`, ...outcome });
    else await markJobDone(job, { status: 'succeeded', scoreId: stored.id, note: null, judgeTraceId: outcome.judgeTraceId });
  }

  /** A failed attempt: retried with a doubling wait while transient and attempts are left, else failed for good. */
  async function fail(job: ClaimedJob, failure: { transient: boolean; error: string; judgeTraceId?: string }) {
    const retryAfter = failure.transient && job.attempts < retry.maxAttempts ? retryDelayMs(retry, job.attempts) : null;
    await markJobFailed(sql, job, failure.error, retryAfter, failure.judgeTraceId);
  }

  /** Claims and runs one due job of a workspace with a free lane; false when none is due. */
  async function runOne(): Promise<boolean> {
    if (!pace) return claimAndRun();
    // While ingest is busy the lane waits for its burst (a short sleep: stopping is heard soon).
    for (let wait = pace.admit(); wait > 0; wait = pace.admit()) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 250)));
      if (stopping) return false;
    }
    try {
      return await claimAndRun();
    } finally {
      pace.finished();
    }
  }

  async function claimAndRun(): Promise<boolean> {
    const job = await claimFor('', null);
    if (!job) return false;
    try {
      await runJob(job);
    } finally {
      const left = (inFlight.get(job.workspaceId) ?? 1) - 1;
      if (left === 0) inFlight.delete(job.workspaceId);
      else inFlight.set(job.workspaceId, left);
    }
    return true;
  }

  const worker = createQueueWorkerLoop({
    concurrency,
    pollIntervalMs,
    takeOne: runOne,
    beforeRound: scan,
    onRoundError: (error, failedRounds) => options.log?.error({ err: error, failedRounds }, 'evaluator round failed'),
    onRecovered: (failedRounds) => options.log?.warn({ failedRounds }, 'evaluator rounds succeed again'),
  });
  return {
    ...worker,
    start() {
      stopping = false;
      worker.start();
    },
    async stop() {
      stopping = true;
      await worker.stop();
      stopping = false;
    },
    scan,
  };
}
