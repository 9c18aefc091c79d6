-- Read models for the trace detail and list: a span's wire shape in one column, a summary's
-- list item in one column. A trace's detail then reads the key columns and one text column
-- per table instead of 18 summary and 21 span columns (each column read is a fixed cost in
-- the engine; this halved GET /api/traces/:id).

-- spans.detail: the span exactly as the API returns it (a StoredSpan as JSON), written at
-- ingest. The five payload columns become ALIAS columns over it, so `SELECT input FROM spans`
-- still answers the same JSON text and nothing is stored twice.
ALTER TABLE {{local:spans}} {{on_cluster}} ADD COLUMN IF NOT EXISTS detail String DEFAULT '' CODEC(ZSTD(3)) AFTER cost_usd;

ALTER TABLE {{distributed:spans}} {{on_cluster}} ADD COLUMN IF NOT EXISTS detail String DEFAULT '' AFTER cost_usd;

-- Rows stored before this migration: their detail built from their columns, the same JSON
-- the ingest writes (src/traces/wire-sql.ts). Tombstones carry no detail.
ALTER TABLE {{local:spans}} {{on_cluster}} UPDATE detail = concat('{', arrayStringConcat(arrayFilter(x -> x != '', [concat('"spanId":', toJSONString(span_id)), if(parent_span_id != '', concat('"parentSpanId":', toJSONString(parent_span_id)), ''), concat('"name":', toJSONString(name)), concat('"kind":', toJSONString(kind)), if(input != '', concat('"input":', input), ''), if(output != '', concat('"output":', output), ''), concat('"startTime":', toJSONString(concat(if(toUnixTimestamp64Micro(start_time) % 1000 = 0, substring(formatDateTime(start_time, '%Y-%m-%dT%H:%i:%S.%f', 'UTC'), 1, 23), formatDateTime(start_time, '%Y-%m-%dT%H:%i:%S.%f', 'UTC')), 'Z'))), concat('"endTime":', toJSONString(concat(if(toUnixTimestamp64Micro(end_time) % 1000 = 0, substring(formatDateTime(end_time, '%Y-%m-%dT%H:%i:%S.%f', 'UTC'), 1, 23), formatDateTime(end_time, '%Y-%m-%dT%H:%i:%S.%f', 'UTC')), 'Z'))), concat('"durationMs":', toJSONString(duration_ms)), if(model != '', concat('"model":', toJSONString(model)), ''), if(provider != '', concat('"provider":', toJSONString(provider)), ''), if(isNotNull(input_tokens), concat('"inputTokens":', toJSONString(assumeNotNull(input_tokens))), ''), if(isNotNull(output_tokens), concat('"outputTokens":', toJSONString(assumeNotNull(output_tokens))), ''), if(isNotNull(total_tokens), concat('"totalTokens":', toJSONString(assumeNotNull(total_tokens))), ''), if(isNotNull(cost_usd), concat('"costUsd":', toJSONString(assumeNotNull(cost_usd))), ''), concat('"status":', toJSONString(status)), if(status_message != '', concat('"statusMessage":', toJSONString(status_message)), ''), if(attributes != '', concat('"attributes":', attributes), ''), if(events != '', concat('"events":', events), ''), if(metadata != '', concat('"metadata":', metadata), '')]), ','), '}')
WHERE detail = '' AND is_deleted = 0 SETTINGS mutations_sync = 2;

ALTER TABLE {{local:spans}} {{on_cluster}}
  MODIFY COLUMN input REMOVE CODEC, MODIFY COLUMN output REMOVE CODEC, MODIFY COLUMN attributes REMOVE CODEC,
  MODIFY COLUMN events REMOVE CODEC, MODIFY COLUMN metadata REMOVE CODEC;

ALTER TABLE {{local:spans}} {{on_cluster}}
  MODIFY COLUMN input String ALIAS JSONExtractRaw(detail, 'input'),
  MODIFY COLUMN output String ALIAS JSONExtractRaw(detail, 'output'),
  MODIFY COLUMN attributes String ALIAS JSONExtractRaw(detail, 'attributes'),
  MODIFY COLUMN events String ALIAS JSONExtractRaw(detail, 'events'),
  MODIFY COLUMN metadata String ALIAS JSONExtractRaw(detail, 'metadata');

ALTER TABLE {{distributed:spans}} {{on_cluster}}
  MODIFY COLUMN input String ALIAS JSONExtractRaw(detail, 'input'),
  MODIFY COLUMN output String ALIAS JSONExtractRaw(detail, 'output'),
  MODIFY COLUMN attributes String ALIAS JSONExtractRaw(detail, 'attributes'),
  MODIFY COLUMN events String ALIAS JSONExtractRaw(detail, 'events'),
  MODIFY COLUMN metadata String ALIAS JSONExtractRaw(detail, 'metadata');

-- `SELECT *` leaves ALIAS columns out: the view names them, so it keeps its columns.
CREATE OR REPLACE VIEW spans_latest {{on_cluster}} AS
SELECT * EXCEPT (is_deleted), input, output, attributes, events, metadata FROM spans FINAL WHERE is_deleted = 0;

-- traces.item: the summary as the list returns it (a TraceListItem as JSON), written by the
-- summary recompute from the same values as the other columns, which stay for filters,
-- aggregates and queries of data teams.
ALTER TABLE {{local:traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS item String DEFAULT '' CODEC(ZSTD(1)) AFTER error_count;

ALTER TABLE {{distributed:traces}} {{on_cluster}} ADD COLUMN IF NOT EXISTS item String DEFAULT '' AFTER error_count;

ALTER TABLE {{local:traces}} {{on_cluster}} UPDATE item = concat('{', arrayStringConcat(arrayFilter(x -> x != '', [concat('"traceId":', toJSONString(trace_id)), concat('"name":', if(name = '', 'null', toJSONString(name))), concat('"sessionId":', if(session_id = '', 'null', toJSONString(session_id))), concat('"source":', toJSONString(source)), concat('"environment":', if(environment = '', 'null', toJSONString(environment))), concat('"status":', toJSONString(status)), concat('"traceKind":', if(trace_kind = '', 'null', toJSONString(trace_kind))), concat('"startTime":', toJSONString(concat(if(toUnixTimestamp64Micro(start_time) % 1000 = 0, substring(formatDateTime(start_time, '%Y-%m-%dT%H:%i:%S.%f', 'UTC'), 1, 23), formatDateTime(start_time, '%Y-%m-%dT%H:%i:%S.%f', 'UTC')), 'Z'))), concat('"endTime":', if(isNull(end_time), 'null', toJSONString(concat(if(toUnixTimestamp64Micro(assumeNotNull(end_time)) % 1000 = 0, substring(formatDateTime(assumeNotNull(end_time), '%Y-%m-%dT%H:%i:%S.%f', 'UTC'), 1, 23), formatDateTime(assumeNotNull(end_time), '%Y-%m-%dT%H:%i:%S.%f', 'UTC')), 'Z')))), concat('"durationMs":', if(isNull(duration_ms), 'null', toJSONString(assumeNotNull(duration_ms)))), if(model != '', concat('"model":', toJSONString(model)), ''), if(provider != '', concat('"provider":', toJSONString(provider)), ''), if(isNotNull(input_tokens), concat('"inputTokens":', toJSONString(assumeNotNull(input_tokens))), ''), if(isNotNull(output_tokens), concat('"outputTokens":', toJSONString(assumeNotNull(output_tokens))), ''), if(isNotNull(total_tokens), concat('"totalTokens":', toJSONString(assumeNotNull(total_tokens))), ''), if(isNotNull(cost_usd), concat('"costUsd":', toJSONString(assumeNotNull(cost_usd))), ''), concat('"spanCount":', toJSONString(span_count)), concat('"errorCount":', toJSONString(error_count))]), ','), '}')
WHERE item = '' AND is_deleted = 0 SETTINGS mutations_sync = 2;
