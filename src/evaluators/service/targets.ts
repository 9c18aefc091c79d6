import type { Sql } from '../../stores/postgres.js';
import type { ChangedTrace, EvaluationTraces, FoundTrace } from '../../contract/evaluation-targets.js';
import type { EvaluationRuns, FoundRunItem } from '../../contract/evaluation-runs.js';
import { enqueueJobs, type JobTarget } from '../tables/jobs-table.js';
import type { StoredEvaluator } from '../tables/evaluators-table.js';
import { isSampled } from './evaluate.js';

/** Where an evaluator's targets are read: the traces (and their spans) and the experiment runs. */
export interface TargetSources {
  traces: EvaluationTraces;
  runs: EvaluationRuns;
}

/** The source of a judge's own trace: never a target of any evaluator. */
export const EVALUATOR_TRACE_SOURCE = 'evaluator';

/**
 * Where a page of targets is read: a window of start times (run items: record times), or, for
 * traces and spans, the traces whose summary was written after a version (`changedAfter`) that
 * started after `startedAfter`. `cursor` continues a walk of the same window.
 */
export type TargetWindow =
  | { after: string; before?: string | undefined; cursor?: string | undefined }
  | { changedAfter: string; startedAfter: string; cursor?: string | undefined };

/** One page of an evaluator's targets in a window, in the window's order. */
export interface TargetPage {
  /** Targets finished (and past the evaluator's delay): to be queued. */
  ready: JobTarget[];
  /** The position (start or record time, or summary version) of the first target not ready yet that is not abandoned. */
  waitingFrom?: string;
  /** Targets of the window seen but not ready (still running, or inside the delay). */
  unfinished: number;
  /** The position (start or record time, or summary version) of the last trace or run item the page read; undefined when it read none. */
  lastSeen?: string;
  /** Where the next page of the same window starts; undefined when this page was the last. */
  next?: string;
}

export interface PageOptions {
  /** Targets that ended (run items: were recorded) at or before this time (ms) are ready. */
  readyBy: number;
  /** Targets started before this (ms) and still not ready are abandoned: no page waits for them. */
  abandonedBefore: number;
  /** Traces or run items read. */
  limit: number;
}

/** A page of the evaluator's targets in the window. */
export async function findTargets(
  sources: TargetSources,
  evaluator: StoredEvaluator,
  window: TargetWindow,
  options: PageOptions,
): Promise<TargetPage> {
  const { filters, kind } = evaluator.target;
  const page: TargetPage = { ready: [], unfinished: 0 };
  const notReady = (startedAt: string, position: string) => {
    page.unfinished += 1;
    if (page.waitingFrom === undefined && Date.parse(startedAt) > options.abandonedBefore) page.waitingFrom = position;
  };
  if (kind === 'runs') {
    if (!('after' in window)) throw new Error('run items are found by record time');
    const items = await sources.runs.findItems(
      evaluator.workspaceId,
      {
        datasetId: filters.datasetId,
        createdAfter: window.after,
        createdBefore: window.before,
        ...(window.cursor !== undefined && { afterItem: JSON.parse(window.cursor) as FoundRunItem }),
      },
      options.limit,
    );
    for (const item of items) {
      if (Date.parse(item.createdAt) <= options.readyBy)
        page.ready.push({ traceId: item.traceId, runId: item.runId, datasetItemId: item.datasetItemId });
      else notReady(item.createdAt, item.createdAt);
    }
    const last = items.at(-1);
    page.lastSeen = last?.createdAt;
    if (last && items.length >= options.limit)
      page.next = JSON.stringify({ createdAt: last.createdAt, runId: last.runId, datasetItemId: last.datasetItemId });
    return page;
  }
  const common = { ...(kind === 'traces' && { name: filters.name }), tags: filters.tags, environment: filters.environment };
  const { traces: found, next } =
    'changedAfter' in window
      ? await sources.traces.findChangedTraces(
          evaluator.workspaceId,
          { ...common, startedAfter: window.startedAfter, changedAfter: window.changedAfter, exceptSource: EVALUATOR_TRACE_SOURCE },
          options.limit,
          window.cursor,
        )
      : await sources.traces.findTraces(
          evaluator.workspaceId,
          { ...common, startedAfter: window.after, startedBefore: window.before },
          options.limit,
          window.cursor,
        );
  const positionOf = (trace: FoundTrace | ChangedTrace) => ('version' in trace ? trace.version : trace.startTime);
  const ready: string[] = [];
  for (const trace of found) {
    if (trace.source === EVALUATOR_TRACE_SOURCE) continue;
    if (trace.endTime !== null && Date.parse(trace.endTime) <= options.readyBy) ready.push(trace.traceId);
    else notReady(trace.startTime, positionOf(trace));
  }
  const last = found.at(-1);
  page.lastSeen = last && positionOf(last);
  if (next !== null) page.next = next;
  if (kind === 'traces') page.ready = ready.map((traceId) => ({ traceId }));
  else
    page.ready = await sources.traces.findSpans(evaluator.workspaceId, ready, {
      name: filters.name,
      kind: filters.spanKind,
      promptName: filters.promptName,
    });
  return page;
}

/** The sampling key of a target: every replica, restart and backfill decides alike. */
const sampleKey = (target: JobTarget) => (target.spanId ? `${target.traceId}:${target.spanId}` : target.traceId);

/**
 * Queues a job per target: sampled ones pending, the others recorded `skipped`. Answers how many
 * of each were added; a target that already has a job of the evaluator version is neither.
 */
export async function queueTargets(sql: Sql, evaluator: StoredEvaluator, targets: JobTarget[]) {
  const job = { workspaceId: evaluator.workspaceId, evaluatorId: evaluator.id, version: evaluator.version };
  const sampled: JobTarget[] = [];
  const left: JobTarget[] = [];
  for (const target of targets) (isSampled(evaluator.id, sampleKey(target), evaluator.target.samplingRate) ? sampled : left).push(target);
  const queued = await enqueueJobs(sql, { ...job, status: 'pending' }, sampled);
  const skipped = await enqueueJobs(sql, { ...job, status: 'skipped' }, left);
  return { queued, skipped };
}

/** One millisecond before an ISO time: a strict `after` bound that still takes a target starting at it. */
export const justBefore = (iso: string) => new Date(Date.parse(iso) - 1).toISOString();
