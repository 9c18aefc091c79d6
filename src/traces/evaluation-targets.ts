import type { ClickHouseClient } from '../stores/clickhouse.js';
import type { EvaluationTarget, EvaluationTraces } from '../contract/evaluation-targets.js';
import { AppError } from '../http/errors.js';
import { listTraces } from './list.js';
import type { QueryLimits } from './query-limits.js';
import { getSpan, getTrace } from './read.js';
import type { StoredSpan } from './schemas.js';
import { selectSpanDetails } from './spans-table.js';
import { toStoredSpan } from './tree.js';

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
      try {
        const trace = await getTrace(clickhouse, workspaceId, traceId);
        const root = trace.spans.find((s) => s.parentSpanId === undefined) ?? trace.spans[0];
        return {
          traceId,
          input: contentOf(root?.input),
          output: contentOf(root?.output),
          metadata: root?.metadata ?? {},
          attributes: root?.attributes ?? {},
          durationMs: trace.durationMs,
          costUsd: trace.costUsd ?? null,
        };
      } catch (error) {
        if (error instanceof AppError && error.code === 'NOT_FOUND') return undefined;
        throw error;
      }
    },
  };
}
