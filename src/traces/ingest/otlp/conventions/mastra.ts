import { readCompletionStart, type FieldRow, type TraceFieldRow } from './table.js';

/**
 * Mastra's own observability exported with `@mastra/otel-exporter`: GenAI attributes for the
 * model call (`gen_ai.*`, read by that convention), and Mastra's own carriers beside them: the
 * session and user in the run's metadata (`mastra.metadata.*`) and the first token's time as
 * an ISO time.
 */
export const mastra = {
  fields: [{ field: 'ttftMs', key: 'mastra.completion_start_time', read: readCompletionStart }] satisfies FieldRow[],
  traceFields: [
    { field: 'sessionId', key: 'mastra.metadata.sessionId' },
    { field: 'userId', key: 'mastra.metadata.userId' },
  ] satisfies TraceFieldRow[],
};
