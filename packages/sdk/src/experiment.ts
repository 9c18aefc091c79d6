import { LoupeError } from './errors.js';
import { httpError, request } from './http.js';
import type { ResolvedOptions } from './options.js';
import type { Span } from './span.js';

/** An item of a dataset as the service answers it. */
export interface ExperimentItem {
  id: string;
  input: unknown;
  expectedOutput: unknown;
  metadata: Record<string, unknown>;
}

/** A score an evaluator gives an item's output; it is recorded on the item's trace. */
export interface EvaluatorScore {
  name: string;
  value: number | boolean | string;
  comment?: string;
}

export type Evaluator = (
  item: ExperimentItem,
  output: unknown,
) => EvaluatorScore | EvaluatorScore[] | Promise<EvaluatorScore | EvaluatorScore[]>;

export interface ExperimentOptions {
  /** The dataset's id. */
  dataset: string;
  /** The run's name, unique within the dataset. */
  name: string;
  task: (item: ExperimentItem) => unknown;
  evaluators?: Evaluator[];
  /** Items processed at once (default 4). */
  concurrency?: number;
  /** What was run: the prompt version, the model, … (the run's metadata). */
  metadata?: Record<string, unknown>;
  description?: string;
  /** Where the summary is printed (default console.log). */
  print?: (text: string) => void;
}

/** What went wrong on one item; the run goes on. */
export interface ExperimentFailure {
  datasetItemId: string;
  stage: 'task' | 'evaluator';
  message: string;
}

export interface ExperimentSummary {
  datasetId: string;
  runId: string;
  /** The run in the console. */
  url: string;
  items: number;
  /** Items with an error recorded or a failed trace, as the service counts them. */
  errors: number;
  failures: ExperimentFailure[];
  costUsd: number | null;
  latencyP50: number | null;
  latencyP95: number | null;
  scores: { name: string; dataType: string; n: number; mean: number | null; ci95: { low: number; high: number } | null }[];
}

/** What the experiment needs of the client: its options, spans and their flush. */
export interface ExperimentHost {
  options: ResolvedOptions;
  withSpan<R>(name: string, options: { input?: { raw: unknown } }, fn: (span: Span) => R): R;
  flush(): Promise<void>;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

type RunFigures = Pick<ExperimentSummary, 'items' | 'errors' | 'costUsd' | 'latencyP50' | 'latencyP95' | 'scores'>;

/** One request whose answer must be a success; its envelope's data (and meta). */
async function call<T>(options: ResolvedOptions, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await request(options, method, path, body);
  if (answer.status >= 300) throw httpError(method, path, answer);
  return answer.body as { data: T; meta: { pagination: { nextCursor: string | null } } };
}

/**
 * Runs `task` over a dataset's active items and records the run: each item inside a traced
 * span (its trace is the run item's), each evaluator's scores on that trace, at most
 * `concurrency` items at once. Nothing is retried; a task or evaluator that throws is recorded
 * as its item's error and the run goes on. Prints and resolves with the run's figures.
 */
export async function runExperiment(host: ExperimentHost, experiment: ExperimentOptions): Promise<ExperimentSummary> {
  const { options } = host;
  const datasetPath = `/api/datasets/${encodeURIComponent(experiment.dataset)}`;
  const items: ExperimentItem[] = [];
  let cursor: string | null = null;
  do {
    const page: { data: ExperimentItem[]; meta: { pagination: { nextCursor: string | null } } } = await call<ExperimentItem[]>(
      options,
      'GET',
      `${datasetPath}/items?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    items.push(...page.data);
    cursor = page.meta.pagination.nextCursor;
  } while (cursor);
  const run = (
    await call<{ id: string }>(options, 'POST', `${datasetPath}/runs`, {
      name: experiment.name,
      ...(experiment.metadata ? { metadata: experiment.metadata } : {}),
      ...(experiment.description ? { description: experiment.description } : {}),
    })
  ).data;

  const failures: ExperimentFailure[] = [];
  const runItems: Record<string, unknown>[] = [];
  const scores: Record<string, unknown>[] = [];
  const one = async (item: ExperimentItem) => {
    let traceId = '';
    let spanId = '';
    let output: unknown;
    let error: string | null = null;
    try {
      output = await host.withSpan(`experiment ${experiment.name}`, { input: { raw: item.input } }, async (span) => {
        traceId = span.trace.traceId;
        spanId = span.spanId;
        const value = await experiment.task(item);
        span.setOutput({ raw: value });
        return value;
      });
    } catch (cause) {
      error = `task: ${message(cause)}`;
      failures.push({ datasetItemId: item.id, stage: 'task', message: message(cause) });
    }
    if (error === null) {
      for (const evaluator of experiment.evaluators ?? []) {
        try {
          const given = await evaluator(item, output);
          for (const score of Array.isArray(given) ? given : [given]) scores.push({ ...score, traceId, source: 'eval' });
        } catch (cause) {
          error = `${error === null ? '' : `${error}; `}evaluator: ${message(cause)}`;
          failures.push({ datasetItemId: item.id, stage: 'evaluator', message: message(cause) });
        }
      }
    }
    runItems.push({ datasetItemId: item.id, traceId, spanId, ...(output === undefined ? {} : { output }), error });
  };
  const queue = [...items];
  const workers = Array.from({ length: Math.max(1, Math.min(experiment.concurrency ?? 4, queue.length)) }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await one(item);
  });
  await Promise.all(workers);

  await host.flush();
  for (let i = 0; i < scores.length; i += 1000) await call<unknown>(options, 'POST', '/api/scores', { scores: scores.slice(i, i + 1000) });
  for (let i = 0; i < runItems.length; i += 1000) {
    const answer = (
      await call<{ rejected: number; errors: unknown[] }>(options, 'POST', `${datasetPath}/runs/${run.id}/items`, {
        items: runItems.slice(i, i + 1000),
      })
    ).data;
    if (answer.rejected > 0) throw new LoupeError('http', `run items refused: ${JSON.stringify(answer.errors)}`);
  }
  const figures = (await call<{ figures: RunFigures }>(options, 'GET', `${datasetPath}/runs/${run.id}?limit=1`)).data.figures;
  const summary: ExperimentSummary = {
    datasetId: experiment.dataset,
    runId: run.id,
    url: `${options.baseUrl}/datasets/${experiment.dataset}/runs/${run.id}`,
    items: figures.items,
    errors: figures.errors,
    failures,
    costUsd: figures.costUsd,
    latencyP50: figures.latencyP50,
    latencyP95: figures.latencyP95,
    scores: figures.scores,
  };
  (experiment.print ?? console.log)(summaryText(experiment.name, summary));
  return summary;
}

const figure = (v: number | null | undefined) => (v === null || v === undefined ? '–' : Number(v.toPrecision(4)).toString());

/** The summary as printed: per score mean and interval, cost, latency, errors, and the run's URL. */
export function summaryText(name: string, s: ExperimentSummary): string {
  const lines = [`Experiment ${name}: ${s.items} items, ${s.errors} errors, cost $${figure(s.costUsd)}`];
  lines.push(`  latency p50 ${figure(s.latencyP50)} ms, p95 ${figure(s.latencyP95)} ms`);
  for (const score of s.scores)
    lines.push(`  ${score.name}: mean ${figure(score.mean)} (95% ${figure(score.ci95?.low)} to ${figure(score.ci95?.high)}), n ${score.n}`);
  for (const f of s.failures) lines.push(`  error on ${f.datasetItemId} (${f.stage}): ${f.message}`);
  lines.push(`  ${s.url}`);
  return lines.join('\n');
}
