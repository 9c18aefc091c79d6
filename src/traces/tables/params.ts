import { z } from 'zod';

/** The workspace a statement is confined to: every statement of the feature is led by it. */
export const workspaceId = z.string().min(1);

/** The parameters that pick spans by key: their traces, their ids and the pairs (`concat(trace_id, '/', span_id)`). */
export function spanKeyParams(keys: ReadonlyArray<{ traceId: string; spanId: string }>) {
  return {
    traceIds: [...new Set(keys.map((k) => k.traceId))],
    spanIds: [...new Set(keys.map((k) => k.spanId))],
    keys: keys.map((k) => `${k.traceId}/${k.spanId}`),
  };
}
