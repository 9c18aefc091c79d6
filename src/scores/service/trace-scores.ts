import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { ScoreAverages, TraceScores } from '../../contract/trace-scores.js';
import { toScoreOnTarget } from '../model/score-shape.js';
import type { VersionClock } from '../model/version-clock.js';
import type { ScoreWrites } from './score-writes.js';
import { scoredWorkspaces } from './scored-workspaces.js';
import { selectAveragesOfGroups, traceScoreCondition, traceScoreNames } from '../tables/score-summary-table.js';
import {
  selectAveragesOfSessions,
  selectAveragesOfTraces,
  selectAveragesOfUsers,
  selectScoresOfTrace,
} from '../tables/score-targets-table.js';
import { tombstoneScoresOfTrace } from '../tables/scores-table.js';

function byKey(rows: { key: string; name: string; n: number; mean: number }[]): Map<string, ScoreAverages> {
  const out = new Map<string, ScoreAverages>();
  for (const row of rows) {
    const averages = out.get(row.key) ?? {};
    averages[row.name] = { n: row.n, mean: row.mean };
    out.set(row.key, averages);
  }
  return out;
}

/**
 * The scores the trace reads carry (contract/trace-scores.ts), handed to the trace routes by the
 * app. The routes behind the read barrier wait for unapplied scores there; the reads the trace
 * list makes without one (a page's averages, the score filter), and the tombstones of a deleted
 * trace's scores, wait here for the scores they concern (score-writes.ts).
 */
export function traceScoresOf(clickhouse: ClickHouseClient, clock: VersionClock, writes: ScoreWrites): TraceScores {
  const scored = scoredWorkspaces(clickhouse);
  return {
    settled: async (workspaceId, traceIds) => writes.readable(workspaceId, traceIds),
    ofTrace: async (workspaceId, traceId) => {
      await writes.readable(workspaceId, [traceId]);
      return (await selectScoresOfTrace(clickhouse, { workspaceId, traceIds: [traceId] })).map(toScoreOnTarget);
    },
    averagesOfTraces: async (workspaceId, traceIds) => {
      if (traceIds.length === 0) return new Map();
      await writes.readable(workspaceId, traceIds);
      return byKey(await selectAveragesOfTraces(clickhouse, { workspaceId, traceIds }));
    },
    averagesOfSessions: async (workspaceId, sessionIds) =>
      sessionIds.length === 0 || !(await scored(workspaceId))
        ? new Map()
        : byKey(await selectAveragesOfSessions(clickhouse, { workspaceId, sessionIds })),
    averagesOfUsers: async (workspaceId, userIds) =>
      userIds.length === 0 || !(await scored(workspaceId))
        ? new Map()
        : byKey(await selectAveragesOfUsers(clickhouse, { workspaceId, userIds })),
    deleteOfTrace: async (workspaceId, traceId) => {
      // Its answered scores are stored first, so the tombstones find them all.
      await writes.readable(workspaceId, [traceId]);
      await tombstoneScoresOfTrace(clickhouse, { workspaceId, traceId, version: clock.next().toString() });
    },
    traceCondition: traceScoreCondition,
    traceNames: traceScoreNames,
    averagesOfGroups: async (workspaceId, groups, settings) =>
      (await scored(workspaceId)) ? byKey(await selectAveragesOfGroups(clickhouse, { workspaceId, groups }, settings)) : new Map(),
  };
}
