import { z } from 'zod';
import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { EvaluationTarget, EvaluationTraces } from '../../contract/evaluation-targets.js';
import { AppError } from '../../http/wire/errors.js';
import { listTraces } from './list.js';
import type { QueryLimits } from '../model/query-limits.js';
import { getSpan } from './read.js';
import { traceFiguresReader } from './trace-figures.js';
import type { StoredSpan } from '../model/schemas.js';
import { selectSpanDetails } from '../tables/spans-table.js';
import { groupSpansByTrace, toStoredSpan } from './tree.js';
import { selectChangedTraces } from '../tables/traces-table.js';
import { fromStoredTime } from '../model/stored-time.js';

/** A walk's position in the changed traces (made by `findChangedTraces`, never by a client): the last row's version and trace id. */
const changeCursor = z.object({ version: z.string().regex(/^\d+$/), id: z.string() });

/**
 * What an evaluator reads of a span's input or output: its text when it has one, else the
 * content of its last message, else the whole payload.
 */
function contentOf(io: StoredSpan['input']): unknown {
  if (io === undefined) return undefined;
  if (typeof io.text === 'string') return io.text;
  const last = io.messages?.at(-1);
  if (last) return last.content;
  return io;
}

/** The traces the app hands to the evaluators feature (contract/evaluation-targets.ts). */
export function evaluationTracesOf(clickhouse: ClickHouseClient, limits: QueryLimits): EvaluationTraces {
  const figuresOf = traceFiguresReader(clickhouse);
  /** Many traces in two statements: their figures, and their spans (the root's content is the target's). */
  async function readTraces(workspaceId: string, traceIds: string[]): Promise<Map<string, EvaluationTarget>> {
    const out = new Map<string, EvaluationTarget>();
    if (traceIds.length === 0) return out;
    const [figures, details] = await Promise.all([
      figuresOf(workspaceId, traceIds),
      selectSpanDetails(clickhouse, { workspaceId, traceIds }),
    ]);
    const spans = groupSpansByTrace(details);
    for (const [traceId, figure] of figures) {
      const list = spans.get(traceId) ?? [];
      const root = list.find((s) => s.parentSpanId === undefined) ?? list[0];
      out.set(traceId, {
        traceId,
        input: contentOf(root?.input),
        output: contentOf(root?.output),
        metadata: root?.metadata ?? {},
        attributes: root?.attributes ?? {},
        durationMs: figure.latencyMs,
        costUsd: figure.costUsd,
      });
    }
    return out;
  }
  return {
    async findTraces(workspaceId, filter, limit, cursor) {
      const { items, pagination } = await listTraces(
        clickhouse,
        workspaceId,
        {
          name: filter.name,
          tag: filter.tags,
          environment: filter.environment,
          startAfter: filter.startedAfter,
          startBefore: filter.startedBefore,
          sort: 'startTime',
          limit: Math.min(limit, 100),
          offset: 0,
          cursor,
        },
        limits,
      );
      return {
        traces: items.map((t) => ({ traceId: t.traceId, startTime: t.startTime, endTime: t.endTime, source: t.source })),
        next: pagination.nextCursor,
      };
    },
    async findChangedTraces(workspaceId, filter, limit, cursor) {
      const fetch = Math.min(limit, 100);
      const rows = await selectChangedTraces(clickhouse, {
        workspaceId,
        filter: { name: filter.name, tags: filter.tags, environment: filter.environment, startAfter: filter.startedAfter },
        afterVersion: filter.changedAfter,
        ...(filter.exceptSource !== undefined && { exceptSource: filter.exceptSource }),
        after: cursor === undefined ? undefined : changeCursor.parse(JSON.parse(cursor)),
        fetch,
      });
      const last = rows.at(-1);
      return {
        traces: rows.map((row) => ({
          traceId: row.trace_id,
          startTime: fromStoredTime(row.started),
          endTime: row.ended === null ? null : fromStoredTime(row.ended),
          source: row.source,
          version: row.written,
        })),
        next: last && rows.length >= fetch ? JSON.stringify({ version: last.written, id: last.trace_id }) : null,
      };
    },
    async findSpans(workspaceId, traceIds, filter) {
      if (traceIds.length === 0) return [];
      const rows = await selectSpanDetails(clickhouse, { workspaceId, traceIds });
      return rows
        .map((row) => ({ traceId: row.trace_id, span: toStoredSpan(row.detail) }))
        .filter(
          ({ span }) =>
            (filter.name === undefined || span.name === filter.name) &&
            (filter.kind === undefined || span.kind === filter.kind) &&
            (filter.promptName === undefined || span.promptName === filter.promptName),
        )
        .map(({ traceId, span }) => ({ traceId, spanId: span.spanId }));
    },
    async readSpan(workspaceId, traceId, spanId): Promise<EvaluationTarget | undefined> {
      let span: StoredSpan;
      try {
        span = await getSpan(clickhouse, workspaceId, traceId, spanId);
      } catch (error) {
        if (error instanceof AppError && error.code === 'NOT_FOUND') return undefined;
        throw error;
      }
      return {
        traceId,
        spanId,
        input: contentOf(span.input),
        output: contentOf(span.output),
        metadata: span.metadata ?? {},
        attributes: span.attributes ?? {},
        durationMs: span.durationMs,
        costUsd: span.costUsd ?? null,
      };
    },
    async readTrace(workspaceId, traceId): Promise<EvaluationTarget | undefined> {
      return (await readTraces(workspaceId, [traceId])).get(traceId);
    },
    readTraces,
  };
}
