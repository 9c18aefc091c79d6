import { z } from 'zod';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { traceFilterSchema, traceSummaryFilter } from './traces-table.js';
import { versionText } from './span-rows.js';
import { workspaceId } from './params.js';

/**
 * What changed in `traces`: the summaries written after a version, in version order (the
 * evaluators' scan, src/traces/query/evaluation-targets.ts). Each write of a trace's summary
 * takes a newer version (summaries/recompute.ts), so a trace whose start moved back or that was
 * stored after a later-started one is found by the write, whatever its start time.
 */

/**
 * A page of the live summaries whose newest row is above `afterVersion`, by version then trace
 * id, strictly after the cursor's (`after`) when given, matching the filter. Only rows above the
 * version are read (the minmax index of clickhouse/0021 skips the granules written before it);
 * a trace's newest row is among them whenever any is, so taking each trace's highest there is
 * its live row (`written`: its version). The filter takes the columns read there: name,
 * source, environment, tags, start.
 */
export const selectChangedTraces = defineQuery({
  name: 'selectChangedTraces',
  params: z.object({
    workspaceId,
    filter: traceFilterSchema,
    afterVersion: versionText,
    /** Leaves out the traces of this source (the evaluators' own). */
    exceptSource: z.string().optional(),
    after: z.object({ version: versionText, id: z.string() }).optional(),
    fetch: z.number().int().min(1),
  }),
  row: z.object({
    trace_id: z.string(),
    started: z.string(),
    ended: z.string().nullable(),
    source: z.string(),
    written: versionText,
  }),
  sql: ({ workspaceId, filter, afterVersion, exceptSource, after, fetch }) => {
    const { where, values } = traceSummaryFilter(filter, { candidates: false });
    // A page after a cursor reads only the rows from the cursor's version on: a trace whose live
    // row is past the cursor has it there, and those whose live row is older were on earlier pages.
    const [from, cursor] = after
      ? [
          'version >= {afterRowVersion:UInt64}',
          'AND (version > {afterRowVersion:UInt64} OR (version = {afterRowVersion:UInt64} AND trace_id > {afterId:String}))',
        ]
      : ['1', ''];
    const except = exceptSource === undefined ? '' : 'AND source != {exceptSource:String}';
    return {
      values: {
        ...values,
        workspaceId,
        afterVersion,
        fetch,
        ...(exceptSource !== undefined && { exceptSource }),
        ...(after && { afterRowVersion: after.version, afterId: after.id }),
      },
      query: `
        SELECT trace_id, toString(start_time) AS started, toString(end_time) AS ended, source, toString(version) AS written
        FROM (
          SELECT workspace_id, trace_id, name, source, environment, tags, start_time, end_time, version, is_deleted FROM traces
          WHERE workspace_id = {workspaceId:String} AND version > {afterVersion:UInt64} AND ${from}
          ORDER BY version DESC
          LIMIT 1 BY trace_id)
        WHERE ${where} ${except} ${cursor}
        ORDER BY version ASC, trace_id ASC
        LIMIT {fetch:UInt32}`,
    };
  },
});
