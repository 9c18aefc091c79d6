-- The `spans` view of POST /api/sql (src/sql/) gains `search_text`: the text index's own
-- expression over each span's detail (clickhouse/0015: JSON escapes turned into spaces,
-- lowercased), so a data team's `hasAllTokens(search_text, ['refund', 'policy'])` (or
-- hasAnyTokens) reads only the granules holding the words. The engine pushes the condition
-- through the view to the table and checks each row after FINAL, so only a span's live version
-- decides; the view's other columns are those of migration 0008, unchanged.
CREATE OR REPLACE VIEW sql_spans {{on_cluster}} AS
SELECT trace_id, span_id, parent_span_id, name, kind, status, status_message, start_time, end_time, duration_ms, ttft_ms,
  model, provider, input_tokens, output_tokens, total_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
  cost_usd, cost_source, prompt_name, prompt_version,
  attributes_map AS attributes, metadata_map AS metadata, input, output, events,
  trace_name, session_id, user_id, tags, service, source, environment,
  lowerUTF8(replaceRegexpAll(detail, '\\\\[nrtbf"\\\\/]', ' ')) AS search_text
FROM spans FINAL
WHERE workspace_id = {workspace:String} AND is_deleted = 0;
