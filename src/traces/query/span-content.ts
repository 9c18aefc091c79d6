import type { ClickHouseClient } from '../../stores/clickhouse.js';
import type { SpanContentReader } from '../../contract/span-content.js';
import { selectSpanDetail } from '../tables/spans-table.js';
import { toStoredSpan } from './tree.js';

/** The reader of a span's input and output the app hands to the datasets feature (contract/span-content.ts). */
export function spanContentReader(clickhouse: ClickHouseClient): SpanContentReader {
  return async (workspaceId, traceId, spanId) => {
    const detail = await selectSpanDetail(clickhouse, { workspaceId, traceId, spanId });
    if (detail === undefined) return undefined;
    const span = toStoredSpan(detail);
    return { input: span.input, output: span.output };
  };
}
