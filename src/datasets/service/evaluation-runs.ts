import type { Sql } from '../../stores/postgres.js';
import type { EvaluationRuns } from '../../contract/evaluation-runs.js';
import { selectItemsOfRun, selectRunItemContent, selectRunItemsRecorded } from '../tables/runs-table.js';

/** The experiment runs the app hands to the evaluators feature (contract/evaluation-runs.ts). */
export function evaluationRunsOf(sql: Sql): EvaluationRuns {
  return {
    findItems: (workspaceId, window, limit) =>
      selectRunItemsRecorded(
        sql,
        workspaceId,
        {
          datasetId: window.datasetId,
          after: new Date(window.createdAfter),
          before: window.createdBefore === undefined ? undefined : new Date(window.createdBefore),
          afterItem: window.afterItem,
        },
        limit,
      ),
    itemsOfRun: (workspaceId, runId) => selectItemsOfRun(sql, workspaceId, runId),
    async readItem(workspaceId, runId, datasetItemId) {
      const row = await selectRunItemContent(sql, workspaceId, runId, datasetItemId);
      // A run that recorded no output (null) leaves the trace's output in place.
      return row && { ...row, output: row.output === null ? undefined : row.output };
    },
  };
}
