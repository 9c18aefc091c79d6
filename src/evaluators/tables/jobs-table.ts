import type { Sql } from '../../stores/postgres.js';
import type { EvaluatorJob } from '../api/schemas.js';

/** The SQL on `evaluator_jobs` (postgres/0011): the durable queue of evaluations. */

/** What a job judges: a trace, a span of it, or an experiment run item (through its trace). */
export interface JobTarget {
  traceId: string;
  spanId?: string | undefined;
  runId?: string | undefined;
  datasetItemId?: string | undefined;
}

/**
 * Adds a job per target; a (evaluator, version, trace, span) already queued, done or failed is
 * left alone, so finding a target again (another worker, a restart, a backfill) never scores it
 * twice. Answers how many jobs were added.
 */
export async function enqueueJobs(
  sql: Sql,
  job: { workspaceId: string; evaluatorId: string; version: number; status: 'pending' | 'skipped' },
  targets: JobTarget[],
): Promise<number> {
  if (targets.length === 0) return 0;
  const rows = targets.map((t) => ({
    trace_id: t.traceId,
    span_id: t.spanId ?? '',
    run_id: t.runId ?? null,
    dataset_item_id: t.datasetItemId ?? null,
  }));
  const skipped = job.status === 'skipped';
  const added = await sql`
    insert into evaluator_jobs (workspace_id, evaluator_id, evaluator_version, trace_id, span_id, run_id, dataset_item_id, status,
      finished_at, last_error)
    select ${job.workspaceId}, ${job.evaluatorId}, ${job.version}, t.trace_id, t.span_id, t.run_id, t.dataset_item_id, ${job.status},
      ${skipped ? new Date() : null}, ${skipped ? 'left out by the sampling rate' : null}
    from jsonb_to_recordset(${sql.json(rows)}::jsonb) as t(trace_id text, span_id text, run_id uuid, dataset_item_id text)
    on conflict (evaluator_id, evaluator_version, trace_id, span_id) do nothing
    returning id`;
  return added.length;
}

export interface ClaimedJob {
  id: string;
  /** This claim's token: only its holder may finish the job (a claim taken over after its lease holds another). */
  claim: string;
  workspaceId: string;
  evaluatorId: string;
  evaluatorVersion: number;
  traceId: string;
  /** '' for a trace. */
  spanId: string;
  runId: string | null;
  datasetItemId: string | null;
  /** Counting this one. */
  attempts: number;
  /** The evaluator's version now: a job of an older one is skipped. */
  currentVersion: number;
}

/**
 * Claims up to `limit` due jobs, oldest first, for `leaseMs`, in one statement: picked with `FOR
 * UPDATE SKIP LOCKED` (two workers never pick one row) and leased by moving their due time past
 * the lease, so no connection is held while the judges answer. At most `room` jobs of a
 * workspace are taken: `perWorkspace` less the jobs of it this worker is running
 * (`running`); a workspace with none left is not looked at. A job whose worker died is due
 * again when its lease ends; the attempt is counted at the claim, so a job that kills its
 * worker runs out of attempts like any other. A paused evaluator's jobs wait.
 */
export async function claimDueJobs(
  sql: Sql,
  claim: { limit: number; perWorkspace: number; running: ReadonlyMap<string, number>; leaseMs: number },
): Promise<ClaimedJob[]> {
  const running = Object.fromEntries(claim.running);
  const full = [...claim.running].filter(([, n]) => n >= claim.perWorkspace).map(([w]) => w);
  return sql<ClaimedJob[]>`
    with picked as (
      select d.id, d.workspace_id, d.next_attempt_at from evaluator_jobs d join evaluators e on e.id = d.evaluator_id and e.status = 'active'
      where d.status = 'pending' and d.next_attempt_at <= now() and d.workspace_id <> all(${full}::uuid[])
      order by d.next_attempt_at
      limit ${claim.limit}
      for update of d skip locked),
    chosen as (
      select id from (
        select p.id, row_number() over (partition by p.workspace_id order by p.next_attempt_at, p.id) as nth,
          ${claim.perWorkspace}::int - coalesce((${sql.json(running)}::jsonb ->> p.workspace_id::text)::int, 0) as room
        from picked p) r
      where r.nth <= r.room)
    update evaluator_jobs j
    set next_attempt_at = now() + make_interval(secs => ${claim.leaseMs / 1000}), claim = gen_random_uuid(), attempts = j.attempts + 1
    from chosen c
    where j.id = c.id
    returning j.id, j.claim, j.workspace_id as "workspaceId", j.evaluator_id as "evaluatorId", j.evaluator_version as "evaluatorVersion",
      j.trace_id as "traceId", j.span_id as "spanId", j.run_id as "runId", j.dataset_item_id as "datasetItemId", j.attempts,
      (select e.version from evaluators e where e.id = j.evaluator_id) as "currentVersion"`;
}

type Claimed = Pick<ClaimedJob, 'id' | 'claim'>;

export interface JobEnd {
  status: 'succeeded' | 'skipped';
  scoreId: string | null;
  note: string | null;
  judgeTraceId?: string | undefined;
}

/** Ends jobs (each still held by its claim) in one statement; a job whose claim was taken over is left alone. */
export async function markJobsDone(sql: Sql, ends: { job: Claimed; end: JobEnd }[]): Promise<void> {
  if (ends.length === 0) return;
  const rows = ends.map(({ job, end }) => ({
    id: job.id,
    claim: job.claim,
    status: end.status,
    score_id: end.scoreId,
    note: end.note,
    judge_trace_id: end.judgeTraceId ?? null,
  }));
  await sql`
    update evaluator_jobs j set status = t.status, score_id = t.score_id, last_error = t.note, finished_at = now(),
      judge_trace_id = coalesce(t.judge_trace_id, j.judge_trace_id), claim = null
    from jsonb_to_recordset(${sql.json(rows)}::jsonb) as t(id uuid, claim uuid, status text, score_id text, note text, judge_trace_id text)
    where j.id = t.id and j.claim = t.claim`;
}

/** A failed attempt: retried after `retryAfterMs`, or failed for good when it is null. */
export async function markJobFailed(
  sql: Sql,
  job: Claimed,
  error: string,
  retryAfterMs: number | null,
  judgeTraceId?: string,
): Promise<void> {
  await sql`
    update evaluator_jobs set last_error = ${error.slice(0, 1000)},
      judge_trace_id = coalesce(${judgeTraceId ?? null}, judge_trace_id),
      status = ${retryAfterMs === null ? 'failed' : 'pending'},
      next_attempt_at = now() + make_interval(secs => ${(retryAfterMs ?? 0) / 1000}),
      finished_at = case when ${retryAfterMs === null} then now() else null end, claim = null
    where id = ${job.id} and claim = ${job.claim}`;
}

/** Puts a job back for later without counting its attempt (its connection's rate limit is spent). */
export async function deferJob(sql: Sql, job: Claimed, delayMs: number): Promise<void> {
  await sql`
    update evaluator_jobs set next_attempt_at = now() + make_interval(secs => ${delayMs / 1000}), attempts = attempts - 1, claim = null
    where id = ${job.id} and claim = ${job.claim}`;
}

interface JobRow {
  id: string;
  evaluatorVersion: number;
  traceId: string;
  spanId: string;
  runId: string | null;
  datasetItemId: string | null;
  status: EvaluatorJob['status'];
  attempts: number;
  error: string | null;
  scoreId: string | null;
  judgeTraceId: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The evaluator's jobs, newest first. */
export async function selectJobs(
  sql: Sql,
  workspaceId: string,
  evaluatorId: string,
  limit: number,
  status?: EvaluatorJob['status'],
): Promise<EvaluatorJob[]> {
  const rows = await sql<JobRow[]>`
    select id, evaluator_version as "evaluatorVersion", trace_id as "traceId", span_id as "spanId", run_id as "runId",
      dataset_item_id as "datasetItemId", status, attempts, last_error as error, score_id as "scoreId",
      judge_trace_id as "judgeTraceId", created_at as "createdAt", finished_at as "finishedAt"
    from evaluator_jobs
    where workspace_id = ${workspaceId} and evaluator_id = ${evaluatorId} ${status ? sql`and status = ${status}` : sql``}
    order by created_at desc, id
    limit ${limit}`;
  return rows.map((r) => ({
    ...r,
    spanId: r.spanId === '' ? null : r.spanId,
    createdAt: r.createdAt.toISOString(),
    finishedAt: r.finishedAt?.toISOString() ?? null,
  }));
}
