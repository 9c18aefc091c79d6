import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { BoundedAnswer, answerLimit, clip, compactJson, textPage } from './bounded-answer.js';
import {
  answer,
  callText,
  cursorListAnswer,
  isoTime,
  offsetSchema,
  payloadText,
  readOnly,
  writeCursorPage,
  writeLines,
} from './tool-answer.js';
import { registerExperimentTools } from './experiment-tools.js';
import { registerScoreTools } from './score-tools.js';
import { type LoupeApi, type Prompt, type SpanNode, type TraceSummary } from './loupe-api.js';

/**
 * Loupe's MCP server: the tools a coding agent uses to read traces, sessions, figures, SQL and
 * prompts. One definition for both transports (stdio in `npx loupe mcp`, streamable HTTP at
 * `/mcp`); each reads through the `LoupeApi` it is given, so the credential behind that API
 * decides the one workspace every tool sees.
 */

export const serverInfo = { name: 'loupe', version: '0.1.0' };

const instructions = `Loupe holds the traces of an AI application (one trace per request or agent run, made of spans: LLM calls, tool calls, retrievals…) and its prompt versions.
Start with search_traces (filters: status, name, session, user, tag, model, environment, time range; q for text in the spans) or get_stats / get_analytics for figures; open one trace with get_trace (its span tree, without payloads), then read a span's input, output and attributes with get_span. run_sql answers anything else (read-only SQL over the views spans, traces, sessions, users). get_prompt and render_prompt read prompt versions by name and label or version. list_scores and get_score_analytics read quality scores (of traces, spans, sessions); list_datasets, list_runs, get_run and compare_runs read experiments (runs of a task over a dataset's items, their figures, and whether a run is better than another).
Every answer is cut at about ${answerLimit / 1000} KB; when it is, its last line says how to read on (a cursor, an offset, a span id) or how to narrow.`;

/** A span's parts get_span shows as texts of their own, each bounded, after its header line of figures. */
const heavySpanFields = ['input', 'output', 'attributes', 'events', 'metadata', 'statusMessage'] as const;
type HeavySpanField = (typeof heavySpanFields)[number];
/** Characters of each heavy field shown in a whole-span answer; the rest is read by `field` and `offset`. */
const spanFieldPreview = 4_000;
/** Characters of each prompt text shown when no `field` is asked for. */
const promptTextPreview = 12_000;
/** Characters of one SQL cell; longer values are cut (substring() in the query reads them). */
const sqlCellLimit = 2_000;

/** The span texts `q` can search (GET /api/traces `searchIn`; the service checks them again). */
const searchFields = ['names', 'input', 'output', 'statusMessage', 'attributes'] as const;

/** How the prompt tools name a version. */
const promptRef = {
  name: z.string().min(1).describe('The prompt name'),
  label: z.string().optional().describe('A label such as production; "latest" (the default) is the latest version'),
  version: z.string().optional().describe('An exact version such as 1.2.0 (instead of label)'),
};

/** How the prompt tools page through a long text. */
const promptPage = {
  field: z.enum(['systemPrompt', 'humanPrompt']).optional().describe('Read only this text, from offset'),
  offset: offsetSchema.describe('Character offset into field'),
};

/**
 * The tools' input schemas, built once: building zod schemas costs milliseconds, and /mcp makes
 * a server per request.
 */
const toolInputs = {
  search_traces: {
    status: z.enum(['running', 'completed', 'error']).optional().describe('error: the root span failed; running: no root span yet'),
    name: z.string().optional().describe('The trace name, exactly'),
    sessionId: z.string().optional(),
    userId: z.string().optional(),
    tags: z.array(z.string()).optional().describe('Every tag listed must be on the trace'),
    model: z.string().optional().describe('A model used by one of its LLM spans'),
    environment: z.string().optional(),
    service: z.string().optional(),
    source: z.string().optional().describe('sdk, otel, …'),
    startAfter: isoTime.optional().describe('Traces that started at or after this time (ISO 8601)'),
    startBefore: isoTime.optional().describe('Traces that started before this time (ISO 8601)'),
    q: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('Text the trace must hold in one span: every word (case-insensitive), or "a phrase" in double quotes as written'),
    searchIn: z
      .array(z.enum(searchFields))
      .min(1)
      .optional()
      .describe('With q: the span texts to search (default all): names, input, output, statusMessage, attributes'),
    minDurationMs: z.number().min(0).optional(),
    minCostUsd: z.number().min(0).optional(),
    sort: z.enum(['startTime', '-startTime', 'durationMs', '-durationMs', 'costUsd', '-costUsd']).optional().describe('Default -startTime'),
    limit: z.number().int().min(1).max(100).optional().describe('Traces per page, default 20'),
    cursor: z.string().optional().describe('The cursor of the previous answer, with the same filters'),
  },
  get_trace: {
    traceId: z.string().min(1),
    spanOffset: offsetSchema.describe('Skip this many spans of the tree (as the previous answer says)'),
  },
  get_span: {
    traceId: z.string().min(1),
    spanId: z.string().min(1),
    field: z.enum(heavySpanFields).optional().describe('Read only this part of the span, from offset'),
    offset: offsetSchema.describe('Character offset into field'),
  },
  get_session: {
    sessionId: z.string().min(1),
    startAfter: isoTime.optional(),
    startBefore: isoTime.optional(),
    limit: z.number().int().min(1).max(100).optional().describe('Traces per page, default 20'),
    cursor: z.string().optional(),
  },
  get_stats: {
    groupBy: z
      .enum(['model', 'provider', 'kind', 'source', 'service', 'user', 'session', 'tag', 'name', 'score'])
      .optional()
      .describe('Default model; score: the traces of each score name. Every group carries its score averages'),
    from: isoTime.optional(),
    to: isoTime.optional(),
    sessionId: z.string().optional(),
    limit: z.number().int().min(1).max(1000).optional().describe('The top groups to answer, default 20'),
  },
  get_analytics: {
    startAfter: isoTime.optional(),
    startBefore: isoTime.optional(),
    budget: z.number().min(0).optional().describe('A budget in USD for the range'),
  },
  run_sql: {
    query: z.string().min(1).describe('SELECT … FROM spans|traces|sessions|users …'),
    parameters: z.record(z.string(), z.unknown()).optional().describe('Values of the {name:Type} placeholders'),
  },
  list_prompts: {
    name: z.string().optional().describe('Only the versions of this prompt'),
    allVersions: z.boolean().optional().describe('Every version, not only the latest of each prompt'),
    limit: z.number().int().min(1).max(200).optional().describe('Default 50'),
    offset: offsetSchema,
  },
  get_prompt: {
    ...promptRef,
    field: z.enum(['systemPrompt', 'humanPrompt', 'rawPrompt']).optional().describe('Read only this text, from offset'),
    offset: promptPage.offset,
  },
  render_prompt: {
    ...promptRef,
    variables: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('Placeholder values by name'),
    ...promptPage,
  },
};

function traceLine(trace: TraceSummary): string {
  const { traceId, name, status, startTime, durationMs, traceKind, model, totalTokens, costUsd, spanCount, errorCount } = trace;
  const { sessionId, userId, tags, environment, service, source } = trace;
  const highlight = trace.highlight as { spanId: string; field: string; text: string } | undefined;
  return compactJson({
    traceId,
    name,
    status,
    startTime,
    durationMs,
    traceKind,
    model,
    totalTokens,
    costUsd,
    spanCount,
    errorCount,
    sessionId,
    userId,
    tags,
    environment,
    service,
    source,
    highlight: highlight ? { spanId: highlight.spanId, field: highlight.field, text: highlight.text } : undefined,
  });
}

/** Trace lines of one page, with the hint to read on: the cursor, or a lower limit when the budget cut the page. */
function writeTracePage(
  out: BoundedAnswer,
  traces: TraceSummary[],
  nextCursor: string | null,
  call: (args: Record<string, unknown>) => string,
): string | undefined {
  return writeCursorPage(out, traces.map(traceLine), 'traces', nextCursor ? call({ cursor: nextCursor }) : null);
}

/** The span tree in depth-first order, children in start order; a span whose parent is absent is a root. */
export function outlineOf(spans: SpanNode[]): Array<{ depth: number; span: SpanNode }> {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, SpanNode[]>();
  const roots: SpanNode[] = [];
  for (const span of spans) {
    if (span.parentSpanId && ids.has(span.parentSpanId) && span.parentSpanId !== span.spanId) {
      const siblings = children.get(span.parentSpanId) ?? [];
      siblings.push(span);
      children.set(span.parentSpanId, siblings);
    } else roots.push(span);
  }
  const outline: Array<{ depth: number; span: SpanNode }> = [];
  const seen = new Set<string>();
  // Iterative, so a deep chain of spans cannot exhaust the stack.
  const stack = roots
    .slice()
    .reverse()
    .map((span) => ({ depth: 0, span }));
  while (stack.length > 0) {
    const { depth, span } = stack.pop()!;
    if (seen.has(span.spanId)) continue;
    seen.add(span.spanId);
    outline.push({ depth, span });
    const below = children.get(span.spanId) ?? [];
    for (let i = below.length - 1; i >= 0; i--) stack.push({ depth: depth + 1, span: below[i]! });
  }
  // Spans on a parent cycle reach no root: listed last, at the top level.
  for (const span of spans) if (!seen.has(span.spanId)) outline.push({ depth: 0, span });
  return outline;
}

function spanLine(depth: number, span: SpanNode): string {
  const figures = [span.kind, span.status];
  if (typeof span.durationMs === 'number') figures.push(`${span.durationMs} ms`);
  if (typeof span.model === 'string') figures.push(span.model);
  if (typeof span.totalTokens === 'number') figures.push(`${span.totalTokens} tokens`);
  if (typeof span.costUsd === 'number') figures.push(`$${span.costUsd}`);
  return `${'  '.repeat(Math.min(depth, 40))}- ${span.spanId} ${JSON.stringify(clip(span.name, 160))} (${figures.join(', ')})`;
}

/**
 * Long texts (a span's payloads, a prompt's templates): without `field`, a preview of each;
 * with it, one of them from `offset`, as much as the answer holds. Every cut names the call
 * that reads on.
 */
function writeTextFields(
  out: BoundedAnswer,
  fields: Array<{ name: string; text: string }>,
  page: { field?: string | undefined; offset?: number | undefined },
  preview: number,
  readOn: (field: string, offset: number) => string,
): string[] {
  const hints: string[] = [];
  for (const { name, text } of fields) {
    if (page.field !== undefined && page.field !== name) continue;
    const offset = page.field === undefined ? 0 : (page.offset ?? 0);
    if (offset > text.length) {
      hints.push(`${name} has ${text.length} characters: offset ${offset} is past its end.`);
      continue;
    }
    out.add(`${name} (${text.length} characters${offset > 0 ? `, from character ${offset}` : ''}):`);
    const size = Math.max(0, Math.min(page.field === undefined ? preview : Number.POSITIVE_INFINITY, out.free - 1));
    const { part, next } = textPage(text, offset, size);
    if (part !== '') out.add(part);
    if (next !== null) hints.push(`${name} is cut at character ${next} of ${text.length}; read on: ${readOn(name, next)}`);
  }
  return hints;
}

/** The MCP server with Loupe's tools, reading through `api`. */
export function createMcpServer(api: LoupeApi): McpServer {
  const server = new McpServer(serverInfo, { instructions });

  server.registerTool(
    'search_traces',
    {
      title: 'Search traces',
      description:
        'List the traces of the workspace, newest first, one compact JSON line each (id, name, status, start, duration, model, tokens, cost, span and error counts, session, user, tags). Filters are exact matches and combine. q finds text: traces with a span whose names, input, output, status message or attributes hold every word of q (or the "quoted phrase"), narrowed to some of those texts by searchIn; each hit line then carries a highlight (the span and the snippet that matched). Page on with the cursor the answer gives.',
      inputSchema: toolInputs.search_traces,
      annotations: readOnly,
    },
    (args) =>
      answer(async () => {
        const { tags, searchIn, limit = 20, ...filters } = args;
        const { traces, pagination } = await api.listTraces({ ...filters, tag: tags, searchIn: searchIn?.join(','), limit });
        return cursorListAnswer(traces.map(traceLine), pagination, { one: 'trace', many: 'traces' }, (next) =>
          callText('search_traces', { ...args, cursor: next }),
        );
      }),
  );

  server.registerTool(
    'get_trace',
    {
      title: 'Get a trace',
      description:
        "One trace: its summary and its span tree, one line per span (id, name, kind, status, duration, model, tokens, cost), children indented under their parent, without the spans' payloads. Read a span's input, output, attributes and events with get_span. A large tree is shown in parts: the answer names the spanOffset of the next part.",
      inputSchema: toolInputs.get_trace,
      annotations: readOnly,
    },
    ({ traceId, spanOffset = 0 }) =>
      answer(async () => {
        const { spans, ...trace } = await api.getTraceTree(traceId);
        const outline = outlineOf(spans);
        const out = new BoundedAnswer();
        out.add(`Trace ${traceLine(trace)}`);
        out.add(`${outline.length} spans (tree order, children indented):`);
        let shown = 0;
        for (const { depth, span } of outline.slice(spanOffset)) {
          if (!out.add(spanLine(depth, span))) break;
          shown += 1;
        }
        const end = spanOffset + shown;
        const read = `get_span ${JSON.stringify({ traceId, spanId: '<spanId>' })} reads a span whole.`;
        if (end < outline.length) {
          return out.text(
            `Spans ${spanOffset + 1}–${end} of ${outline.length} shown. Next part: ${callText('get_trace', { traceId, spanOffset: end })}. ${read}`,
          );
        }
        return out.text(spanOffset > outline.length ? `spanOffset ${spanOffset} is past the ${outline.length} spans.` : read);
      }),
  );

  server.registerTool(
    'get_span',
    {
      title: 'Get a span',
      description: `One span whole: its figures, then its input, output, attributes, events, metadata and status message as JSON. Each of those is previewed up to ${spanFieldPreview} characters; to read one in full, call again with field and offset as the answer says.`,
      inputSchema: toolInputs.get_span,
      annotations: readOnly,
    },
    ({ traceId, spanId, field, offset }) =>
      answer(async () => {
        const span = await api.getSpan(traceId, spanId);
        const light: Record<string, unknown> = {};
        const heavy: Array<{ name: HeavySpanField; text: string }> = [];
        for (const [key, value] of Object.entries(span)) {
          if ((heavySpanFields as readonly string[]).includes(key)) {
            if (value !== undefined && value !== null) heavy.push({ name: key as HeavySpanField, text: payloadText(value) });
          } else light[key] = value;
        }
        const out = new BoundedAnswer();
        out.add(`Span ${compactJson(light)}`);
        if (field !== undefined && !heavy.some((h) => h.name === field)) return out.text(`The span has no ${field}.`);
        const hints = writeTextFields(out, heavy, { field, offset }, spanFieldPreview, (name, next) =>
          callText('get_span', { traceId, spanId, field: name, offset: next }),
        );
        return out.text(hints.join('\n'));
      }),
  );

  server.registerTool(
    'get_session',
    {
      title: 'Get a session',
      description:
        'A session (the traces sharing a sessionId, e.g. one conversation): its figures (traces, tokens, cost, errors, duration, users) and its traces in start order, one compact JSON line each. Traces of the window only (default the last 30 days); page on with the cursor the answer gives.',
      inputSchema: toolInputs.get_session,
      annotations: readOnly,
    },
    (args) =>
      answer(async () => {
        const { sessionId, ...query } = args;
        const { session, pagination } = await api.getSession(sessionId, query);
        const { traces, ...figures } = session;
        const out = new BoundedAnswer();
        out.add(`Session ${compactJson(figures)}`);
        out.add(`${traces.length} traces on this page (start order):`);
        const hint = writeTracePage(out, traces, pagination.nextCursor, (more) => callText('get_session', { ...args, ...more }));
        return out.text(hint ?? 'No more traces in this session.');
      }),
  );

  server.registerTool(
    'get_stats',
    {
      title: 'Trace figures by group',
      description:
        'Traces, spans, errors, tokens, cost, latency (avg, p50, p95, p99) and time to first token, grouped by model, provider, span kind, source, service, user, session, tag or trace name: the top groups, one JSON line each. For model, provider and kind the groups are over spans; for the others, over traces.',
      inputSchema: toolInputs.get_stats,
      annotations: readOnly,
    },
    ({ limit = 20, ...query }) =>
      answer(async () => {
        const stats = await api.getStats({ ...query, limit });
        const { groups, ...range } = stats;
        const out = new BoundedAnswer();
        out.add(`${groups.length} groups ${compactJson(range)}:`);
        const shown = writeLines(out, groups.map(compactJson));
        return out.text(
          shown < groups.length
            ? `${groups.length - shown} more groups not shown: call again with limit ${Math.max(1, shown)} or a narrower from/to.`
            : undefined,
        );
      }),
  );

  server.registerTool(
    'get_analytics',
    {
      title: 'Workspace analytics',
      description:
        'Figures over a time range (default the last 7 days): totals (traces, spans, errors and error rate, tokens, cost), latency percentiles of traces, cost by model, provider and kind, cost efficiency, usage over time (hourly or daily points) and, with budget, the spend against it.',
      inputSchema: toolInputs.get_analytics,
      annotations: readOnly,
    },
    (query) =>
      answer(async () => {
        const { tokenUsageOverTime, ...figures } = await api.getAnalytics(query);
        const out = new BoundedAnswer();
        for (const [key, value] of Object.entries(figures)) out.add(`${key}: ${JSON.stringify(value)}`);
        const usage = tokenUsageOverTime as { interval: string; points: Array<Record<string, unknown>> };
        out.add(`tokenUsageOverTime (${usage.interval === 'day' ? 'daily' : 'hourly'}, ${usage.points.length} points):`);
        const shown = writeLines(out, usage.points.map(compactJson));
        return out.text(
          shown < usage.points.length
            ? `${usage.points.length - shown} more points not shown: call again with a narrower startAfter/startBefore.`
            : undefined,
        );
      }),
  );

  server.registerTool(
    'run_sql',
    {
      title: 'Run SQL',
      description: `One read-only ClickHouse SELECT over the workspace's views: spans (one row per span: trace_id, span_id, parent_span_id, name, kind, status, status_message, start_time, end_time, duration_ms, model, provider, input_tokens, output_tokens, total_tokens, cost_usd, prompt_name, prompt_version, attributes and metadata as Map(String, String), input, output and events as JSON text, and the trace's session_id, user_id, tags, environment, service, source, trace_name), traces (one summary row per trace: trace_id, name, status, start_time, duration_ms, model, total_tokens, cost_usd, span_count, error_count, session_id, user_id, tags…), sessions and users. Placeholders {name:Type} take parameters. The service's limits apply (time, memory, rows read); answers show rows as JSON arrays, cells over ${sqlCellLimit} characters cut. Select few columns and add LIMIT; leave input/output out of wide scans.`,
      inputSchema: toolInputs.run_sql,
      annotations: readOnly,
    },
    ({ query, parameters }) =>
      answer(async () => {
        const result = await api.runSql(query, parameters);
        const out = new BoundedAnswer();
        out.add(`columns: ${result.columns.map((c) => `${c.name} ${c.type}`).join(', ')}`);
        let shown = 0;
        let cells = 0;
        for (const row of result.rows) {
          const line = JSON.stringify(
            row.map((value) => {
              const text = typeof value === 'string' ? value : undefined;
              if (text === undefined || text.length <= sqlCellLimit) return value;
              cells += 1;
              return clip(text, sqlCellLimit);
            }),
          );
          if (!out.add(line)) break;
          shown += 1;
        }
        const s = result.statistics;
        const hints = [`${result.rows.length} rows; read ${s.rowsRead} rows, ${s.bytesRead} bytes in ${s.elapsedMs.toFixed(1)} ms.`];
        if (shown < result.rows.length) {
          hints.push(
            `Only the first ${shown} rows are shown (the answer is cut at ${answerLimit} characters): add LIMIT ${Math.max(1, shown)} with OFFSET to page, a narrower WHERE, or fewer columns.`,
          );
        }
        if (cells > 0)
          hints.push(`${cells} cells were cut at ${sqlCellLimit} characters: read them with substring(column, start, length).`);
        return out.text(hints.join('\n'));
      }),
  );

  server.registerTool(
    'list_prompts',
    {
      title: 'List prompts',
      description:
        'The prompts of the workspace, name ascending: one line per version (id, name, version, labels, description). Latest versions only unless allVersions.',
      inputSchema: toolInputs.list_prompts,
      annotations: readOnly,
    },
    ({ name, allVersions = false, limit = 50, offset = 0 }) =>
      answer(async () => {
        const { prompts, total } = await api.listPrompts({ name, isLatest: allVersions ? undefined : 'true', limit, offset });
        const out = new BoundedAnswer();
        out.add(`${total} prompt versions${allVersions ? '' : ' (latest of each)'}; ${prompts.length} from offset ${offset}:`);
        let shown = 0;
        for (const p of prompts) {
          const line = compactJson({
            id: p.id,
            name: p.name,
            version: p.version,
            labels: p.labels,
            description: clip(p.description, 200) || undefined,
          });
          if (!out.add(line)) break;
          shown += 1;
        }
        if (offset + shown < total) {
          return out.text(`More: ${callText('list_prompts', { name, allVersions, limit, offset: offset + shown })}`);
        }
        return out.text('get_prompt reads one version with its templates.');
      }),
  );

  const promptFields = (p: { systemPrompt: string; humanPrompt: string | null }) => [
    { name: 'systemPrompt', text: p.systemPrompt },
    ...(p.humanPrompt === null ? [] : [{ name: 'humanPrompt', text: p.humanPrompt }]),
  ];

  server.registerTool(
    'get_prompt',
    {
      title: 'Get a prompt version',
      description: `One prompt version by name and label or version (default the latest): its record (id, version, labels, description, metadata, output schema) and its texts (systemPrompt and humanPrompt with {variable} placeholders, rawPrompt). Each text is previewed up to ${promptTextPreview} characters; field and offset read the rest.`,
      inputSchema: toolInputs.get_prompt,
      annotations: readOnly,
    },
    ({ name, label, version, field, offset }) =>
      answer(async () => {
        const prompt: Prompt = await api.resolvePrompt({ name, label, version });
        // The texts follow apart, each bounded.
        const record: Record<string, unknown> = { ...prompt };
        for (const key of ['systemPrompt', 'humanPrompt', 'rawPrompt']) delete record[key];
        const out = new BoundedAnswer();
        out.add(`Prompt ${compactJson(record)}`);
        const texts = [
          ...promptFields(prompt),
          ...(typeof prompt.rawPrompt === 'string' ? [{ name: 'rawPrompt', text: prompt.rawPrompt }] : []),
        ];
        const hints = writeTextFields(out, texts, { field, offset }, promptTextPreview, (f, next) =>
          callText('get_prompt', { name, ...(label ? { label } : {}), ...(version ? { version } : {}), field: f, offset: next }),
        );
        return out.text(hints.join('\n'));
      }),
  );

  server.registerTool(
    'render_prompt',
    {
      title: 'Render a prompt version',
      description:
        "Fill a prompt version's {variable} placeholders with the service's template rules; the answer names the variables that were missing (left as placeholders) and those given but unused.",
      inputSchema: toolInputs.render_prompt,
      annotations: readOnly,
    },
    ({ name, label, version, variables = {}, field, offset }) =>
      answer(async () => {
        const prompt = await api.resolvePrompt({ name, label, version });
        const rendered = await api.renderPrompt(prompt.id, variables);
        const out = new BoundedAnswer();
        out.add(
          `Rendered ${compactJson({ name: prompt.name, version: rendered.version, promptId: rendered.promptId, missing: rendered.missing, unused: rendered.unused })}`,
        );
        const hints = writeTextFields(out, promptFields(rendered), { field, offset }, promptTextPreview, (f, next) =>
          callText('render_prompt', {
            name,
            ...(label ? { label } : {}),
            ...(version ? { version } : {}),
            variables,
            field: f,
            offset: next,
          }),
        );
        return out.text(hints.join('\n'));
      }),
  );

  registerScoreTools(server, api);
  registerExperimentTools(server, api);
  return server;
}
