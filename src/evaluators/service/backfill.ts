import { AppError, notFound } from '../../http/wire/errors.js';
import type { Backfill, BackfillResult } from '../api/schemas.js';
import type { JobTarget } from '../tables/jobs-table.js';
import type { EvaluatorDeps } from './evaluators.js';
import { findTargets, justBefore, queueTargets } from './targets.js';
import { selectEvaluator } from '../tables/evaluators-table.js';

/** Traces or run items read per page of a backfill. */
const PAGE = 100;

/**
 * Queues the evaluator's targets of a past window (or every item of one experiment run), at most
 * `maxJobs` of them. Targets already judged or queued for this evaluator version are counted as
 * `existing` and never queued twice (the job's unique key), so a backfill repeated, or run over
 * a window the live scan covered, judges nothing twice. Finished targets only: a trace still
 * running is counted `unfinished` and left to the scan.
 */
export async function backfill(
  deps: EvaluatorDeps,
  workspaceId: string,
  id: string,
  body: Backfill,
  now = Date.now(),
): Promise<BackfillResult> {
  const evaluator = await selectEvaluator(deps.sql, workspaceId, id);
  if (!evaluator) throw notFound('Evaluator', { id });
  const result: BackfillResult = { queued: 0, skipped: 0, existing: 0, unfinished: 0, truncated: false, resumeFrom: null };
  const take = async (targets: JobTarget[]) => {
    const room = body.maxJobs - result.queued - result.skipped;
    const taken = targets.slice(0, room);
    const added = await queueTargets(deps.sql, evaluator, taken);
    result.queued += added.queued;
    result.skipped += added.skipped;
    result.existing += taken.length - added.queued - added.skipped;
    return taken.length === targets.length;
  };

  if (body.runId !== undefined) {
    if (evaluator.target.kind !== 'runs')
      throw new AppError('VALIDATION_ERROR', 'runId is only for an evaluator of kind runs', {
        issues: [{ path: 'runId', message: 'is only for an evaluator of kind runs' }],
      });
    const items = await deps.runs.itemsOfRun(workspaceId, body.runId);
    if (!items)
      throw new AppError('VALIDATION_ERROR', 'runId names no experiment run of this workspace', {
        issues: [{ path: 'runId', message: 'names no experiment run of this workspace' }],
      });
    const all = await take(items.map((i) => ({ traceId: i.traceId, runId: i.runId, datasetItemId: i.datasetItemId })));
    result.truncated = !all;
    return result;
  }

  const to = body.to ?? new Date(now).toISOString();
  const after = body.from!;
  let cursor: string | undefined;
  let resumeFrom = after;
  for (;;) {
    const page = await findTargets(
      deps,
      evaluator,
      { after, before: to, cursor },
      { readyBy: now - evaluator.target.delaySeconds * 1000, abandonedBefore: Number.POSITIVE_INFINITY, limit: PAGE },
    );
    result.unfinished += page.unfinished;
    if (!(await take(page.ready))) {
      // Resumed just before this page's first target: what was queued is found again as `existing`.
      result.truncated = true;
      result.resumeFrom = resumeFrom;
      return result;
    }
    if (page.next === undefined) return result;
    cursor = page.next;
    if (page.lastSeen !== undefined) resumeFrom = justBefore(page.lastSeen);
  }
}
