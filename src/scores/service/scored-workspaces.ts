import type { ClickHouseClient } from '../../stores/clickhouse.js';
import { selectAnyScoreRow } from '../tables/score-targets-table.js';

/**
 * Whether a workspace may hold scores, for the averages of sessions, users and stats groups:
 * their statements read the groups' traces again to find their scores, which costs as much with
 * no score at all (docs/decisions/117-group-averages-in-scoreless-workspaces.md). A workspace with no row in
 * `score_targets` has no average; one look at the first granule of its key range says so.
 *
 * Only a yes is kept: the averages' own statement is exact whatever it finds (a row retention
 * removed, a tombstone), so a workspace once seen holding a row is never looked at again, and
 * one without looks at every read, so its first score counts at the next read.
 */
export function scoredWorkspaces(clickhouse: ClickHouseClient): (workspaceId: string) => Promise<boolean> {
  const holding = new Set<string>();
  return async (workspaceId) => {
    if (holding.has(workspaceId)) return true;
    const [row] = await selectAnyScoreRow(clickhouse, { workspaceId });
    if ((row?.held ?? 0) > 0) holding.add(workspaceId);
    return holding.has(workspaceId);
  };
}
