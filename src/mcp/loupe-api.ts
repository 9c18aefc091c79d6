/**
 * What the MCP tools read, as calls to Loupe's REST API. The same client serves both
 * transports: `npx loupe mcp` sends its requests over the network with fetch (a coding agent
 * on a laptop points it at a remote Loupe), the service's `/mcp` sends them in-process through
 * `app.inject` with the caller's own credential headers. Either way every read goes through
 * the API's authentication, validation, workspace confinement and limits, and nothing here can
 * name another workspace than the one the credential resolves to.
 */

export type QueryValue = string | number | boolean | string[] | undefined;

export interface ApiRequest {
  method: 'GET' | 'POST';
  /** The path under the service's root, with its query: `/api/traces`. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

export interface ApiResponse {
  status: number;
  body: string;
}

/** One exchange with the REST API, by whatever carries it. */
export type SendApiRequest = (request: ApiRequest) => Promise<ApiResponse>;

/** An answer of the API in the error envelope (or one that is not JSON at all). */
export class LoupeApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'LoupeApiError';
  }
}

/** The query string of a request: arrays repeat their key (`tag=a&tag=b`), undefined values are left out. */
export function queryString(query: Record<string, QueryValue> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export interface CursorPage {
  limit: number;
  hasMore: boolean;
  nextCursor: string | null;
}

/** A trace as lists answer it (GET /api/traces); only the fields the tools show are named. */
export interface TraceSummary {
  traceId: string;
  name: string | null;
  status: string;
  startTime: string;
  [field: string]: unknown;
}

export interface SpanNode {
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: string;
  status: string;
  startTime: string;
  [field: string]: unknown;
}

export type TraceTree = TraceSummary & { spans: SpanNode[] };

export interface SqlAnswer {
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
  statistics: { rowsRead: number; bytesRead: number; elapsedMs: number };
}

export interface Prompt {
  id: number;
  name: string;
  version: string;
  labels: string[];
  description: string;
  systemPrompt: string;
  humanPrompt: string | null;
  rawPrompt: string | null;
  [field: string]: unknown;
}

export interface RenderedPrompt {
  promptId: number;
  version: string;
  systemPrompt: string;
  humanPrompt: string | null;
  missing: string[];
  unused: string[];
}

/** A score as GET /api/scores answers it; only the fields the tools read are named. */
export interface Score {
  id: string;
  name: string;
  dataType: 'numeric' | 'categorical' | 'boolean';
  value: number;
  stringValue: string | null;
  comment: string | null;
  [field: string]: unknown;
}

export interface ScoreAnalytics {
  from: string;
  to: string;
  interval: string;
  scores: Array<{ name: string; overTime: Array<Record<string, unknown>>; [field: string]: unknown }>;
}

export interface Dataset {
  id: string;
  name: string;
  description: string | null;
  [field: string]: unknown;
}

export interface Run {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  [field: string]: unknown;
}

/** A run item with its trace's figures (GET /api/datasets/:id/runs/:runId). */
export interface RunItemFigures {
  datasetItemId: string;
  output: unknown;
  error: string | null;
  [field: string]: unknown;
}

export type RunWithFigures = Run & {
  figures: { scores: Array<Record<string, unknown>>; [field: string]: unknown };
  items: RunItemFigures[];
};

export interface RunComparison {
  runs: Run[];
  metrics: Array<Record<string, unknown>>;
  items: Array<{ datasetItemId: string; runs: Array<RunItemFigures | null> }>;
}

interface Envelope<T> {
  data: T;
  meta: Record<string, unknown>;
}

/** The reads the MCP tools make, one REST call each. */
export class LoupeApi {
  constructor(private readonly send: SendApiRequest) {}

  private async call<T>(request: ApiRequest): Promise<Envelope<T>> {
    const response = await this.send(request);
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body);
    } catch {
      throw new LoupeApiError(response.status, 'INTERNAL_ERROR', `Loupe answered ${response.status} with a body that is not JSON`);
    }
    if (response.status >= 200 && response.status < 300) return parsed as Envelope<T>;
    const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error;
    throw new LoupeApiError(
      response.status,
      typeof error?.code === 'string' ? error.code : 'INTERNAL_ERROR',
      typeof error?.message === 'string' ? error.message : `Loupe answered ${response.status}`,
      error?.details && typeof error.details === 'object' ? (error.details as Record<string, unknown>) : {},
    );
  }

  async listTraces(query: Record<string, QueryValue>): Promise<{ traces: TraceSummary[]; pagination: CursorPage }> {
    const { data, meta } = await this.call<TraceSummary[]>({ method: 'GET', path: '/api/traces', query });
    return { traces: data, pagination: meta.pagination as CursorPage };
  }

  async getTraceTree(traceId: string): Promise<TraceTree> {
    return (await this.call<TraceTree>({ method: 'GET', path: `/api/traces/${encodeURIComponent(traceId)}/tree` })).data;
  }

  async getSpan(traceId: string, spanId: string): Promise<Record<string, unknown>> {
    const path = `/api/traces/${encodeURIComponent(traceId)}/spans/${encodeURIComponent(spanId)}`;
    return (await this.call<Record<string, unknown>>({ method: 'GET', path })).data;
  }

  async getSession(
    sessionId: string,
    query: Record<string, QueryValue>,
  ): Promise<{ session: Record<string, unknown> & { traces: TraceSummary[] }; pagination: CursorPage }> {
    const { data, meta } = await this.call<Record<string, unknown> & { traces: TraceSummary[] }>({
      method: 'GET',
      path: `/api/sessions/${encodeURIComponent(sessionId)}`,
      query,
    });
    return { session: data, pagination: meta.pagination as CursorPage };
  }

  async getStats(query: Record<string, QueryValue>): Promise<{ groupBy: string; groups: Array<Record<string, unknown>> }> {
    return (
      await this.call<{ groupBy: string; groups: Array<Record<string, unknown>> }>({ method: 'GET', path: '/api/traces/stats', query })
    ).data;
  }

  async getAnalytics(query: Record<string, QueryValue>): Promise<Record<string, unknown>> {
    return (await this.call<Record<string, unknown>>({ method: 'GET', path: '/api/traces/analytics', query })).data;
  }

  async runSql(query: string, parameters: Record<string, unknown> | undefined): Promise<SqlAnswer> {
    const { data, meta } = await this.call<Omit<SqlAnswer, 'statistics'>>({
      method: 'POST',
      path: '/api/sql',
      body: { query, ...(parameters ? { parameters } : {}), format: 'json' },
    });
    return { ...data, statistics: meta.statistics as SqlAnswer['statistics'] };
  }

  async listScores(query: Record<string, QueryValue>): Promise<{ scores: Score[]; pagination: CursorPage }> {
    const { data, meta } = await this.call<Score[]>({ method: 'GET', path: '/api/scores', query });
    return { scores: data, pagination: meta.pagination as CursorPage };
  }

  async getScoreAnalytics(query: Record<string, QueryValue>): Promise<ScoreAnalytics> {
    return (await this.call<ScoreAnalytics>({ method: 'GET', path: '/api/scores/analytics', query })).data;
  }

  async listDatasets(): Promise<Dataset[]> {
    return (await this.call<Dataset[]>({ method: 'GET', path: '/api/datasets' })).data;
  }

  async listRuns(datasetId: string): Promise<Run[]> {
    return (await this.call<Run[]>({ method: 'GET', path: `/api/datasets/${encodeURIComponent(datasetId)}/runs` })).data;
  }

  async getRun(
    datasetId: string,
    runId: string,
    query: Record<string, QueryValue>,
  ): Promise<{ run: RunWithFigures; pagination: CursorPage }> {
    const path = `/api/datasets/${encodeURIComponent(datasetId)}/runs/${encodeURIComponent(runId)}`;
    const { data, meta } = await this.call<RunWithFigures>({ method: 'GET', path, query });
    return { run: data, pagination: meta.pagination as CursorPage };
  }

  async compareRuns(datasetId: string, query: Record<string, QueryValue>): Promise<{ comparison: RunComparison; pagination: CursorPage }> {
    const path = `/api/datasets/${encodeURIComponent(datasetId)}/runs/compare`;
    const { data, meta } = await this.call<RunComparison>({ method: 'GET', path, query });
    return { comparison: data, pagination: meta.pagination as CursorPage };
  }

  async listPrompts(query: Record<string, QueryValue>): Promise<{ prompts: Prompt[]; total: number }> {
    const { data, meta } = await this.call<Prompt[]>({ method: 'GET', path: '/api/prompt', query });
    return { prompts: data, total: (meta.pagination as { total: number }).total };
  }

  async resolvePrompt(query: { name: string; label?: string | undefined; version?: string | undefined }): Promise<Prompt> {
    return (await this.call<Prompt>({ method: 'GET', path: '/api/prompt/resolve', query })).data;
  }

  async renderPrompt(promptId: number, variables: Record<string, string | number | boolean>): Promise<RenderedPrompt> {
    return (await this.call<RenderedPrompt>({ method: 'POST', path: `/api/prompt/${promptId}/render`, body: { variables } })).data;
  }
}
