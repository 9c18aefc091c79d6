import { randomUUID } from 'node:crypto';
import type { Sql } from '../../stores/postgres.js';
import type { EnqueueMonitorEvent, MonitorMetricReader } from '../../contract/monitor-metrics.js';
import type { Monitor } from '../api/schemas.js';
import { conditionHolds } from '../model/condition.js';
import * as table from '../tables/monitors-table.js';

export interface MonitorEvaluatorDeps {
  sql: Sql;
  metrics: MonitorMetricReader;
  enqueue: EnqueueMonitorEvent;
  /** The evaluation clock (tests pass a fixed one). */
  now?: () => Date;
  log?: { warn(obj: object, msg: string): void };
}

export type Transition = 'fired' | 'resolved' | 'unchanged';

export interface MonitorEvaluator {
  /** Evaluates one monitor at the clock's time; answers what this evaluator changed. */
  evaluate(monitor: Monitor & { workspaceId: string }): Promise<Transition>;
  /** Evaluates every enabled monitor once; one monitor's failure never stops the others. */
  evaluateAll(): Promise<{ evaluated: number; fired: number; resolved: number; failed: number }>;
}

/** The webhook event's `data`: what a receiver needs to act without another request. */
function eventData(monitor: Monitor, episodeId: string, value: number, previous: number | null, at: Date) {
  return {
    monitorId: monitor.id,
    name: monitor.name,
    metric: monitor.metric,
    ...(monitor.scoreName ? { scoreName: monitor.scoreName } : {}),
    filters: monitor.filters,
    condition: monitor.condition,
    windowSeconds: monitor.windowSeconds,
    episodeId,
    value,
    previousValue: previous,
    evaluatedAt: at.toISOString(),
  };
}

export function createMonitorEvaluator(deps: MonitorEvaluatorDeps): MonitorEvaluator {
  const now = deps.now ?? (() => new Date());

  async function evaluate(monitor: Monitor & { workspaceId: string }): Promise<Transition> {
    const at = now();
    const windowMs = monitor.windowSeconds * 1000;
    const base = {
      workspaceId: monitor.workspaceId,
      metric: monitor.metric,
      scoreName: monitor.scoreName ?? undefined,
      filters: monitor.filters,
    };
    const current = await deps.metrics.measure({ ...base, from: new Date(at.getTime() - windowMs), to: at });
    const previous =
      monitor.condition.kind === 'change'
        ? await deps.metrics.measure({ ...base, from: new Date(at.getTime() - 2 * windowMs), to: new Date(at.getTime() - windowMs) })
        : null;
    const holds = conditionHolds(monitor.condition, current, previous);
    if (holds === true && monitor.state !== 'firing' && current !== null) {
      const episodeId = randomUUID();
      const fired = await deps.sql.begin(async (tx) => {
        if (!(await table.openEpisode(tx, { id: monitor.id, workspaceId: monitor.workspaceId, episodeId, value: current, at })))
          return false;
        await deps.enqueue(tx, monitor.workspaceId, 'monitor.firing', eventData(monitor, episodeId, current, previous, at));
        return true;
      });
      if (fired) return 'fired';
    } else if (holds === false && monitor.state === 'firing' && monitor.episodeId && current !== null) {
      const episodeId = monitor.episodeId;
      const resolved = await deps.sql.begin(async (tx) => {
        if (!(await table.closeEpisode(tx, { id: monitor.id, episodeId, value: current, at }))) return false;
        await deps.enqueue(tx, monitor.workspaceId, 'monitor.resolved', eventData(monitor, episodeId, current, previous, at));
        return true;
      });
      if (resolved) return 'resolved';
    }
    await table.recordValue(deps.sql, monitor.id, current, at);
    return 'unchanged';
  }

  return {
    evaluate,
    async evaluateAll() {
      const monitors = await table.selectEnabledMonitors(deps.sql);
      const counts = { evaluated: 0, fired: 0, resolved: 0, failed: 0 };
      for (const monitor of monitors) {
        try {
          const transition = await evaluate(monitor);
          counts.evaluated += 1;
          if (transition === 'fired') counts.fired += 1;
          if (transition === 'resolved') counts.resolved += 1;
        } catch (error) {
          counts.failed += 1;
          deps.log?.warn({ err: error, monitorId: monitor.id }, 'monitor evaluation failed; it is tried again next round');
        }
      }
      return counts;
    },
  };
}
