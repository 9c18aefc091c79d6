import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { BoundedAnswer, clip, compactJson } from './bounded-answer.js';
import type { LoupeApi, Run, RunItemFigures } from './loupe-api.js';
import { answer, callText, offsetSchema, payloadText, readOnly, writeCursorPage, writeLines } from './tool-answer.js';

/**
 * The MCP tools that read experiments: datasets, their runs (a task run over the dataset's
 * items), a run's figures and items, and runs compared item by item with a verdict per metric.
 */

/** Characters of a text field (a description, a run item's output or error) shown in a line. */
const fieldPreview = 300;

const datasetId = z.string().min(1).describe('The dataset id (list_datasets)');
const pageLimit = z.number().int().min(1).max(100).optional().describe('Items per page, default 20');
const cursor = z.string().optional().describe('The cursor of the previous answer');

const toolInputs = {
  list_datasets: {
    name: z.string().min(1).optional().describe('Datasets whose name holds this text (case-insensitive)'),
    offset: offsetSchema,
  },
  list_runs: { datasetId, offset: offsetSchema },
  get_run: { datasetId, runId: z.string().min(1).describe('The run id (list_runs)'), limit: pageLimit, cursor },
  compare_runs: {
    datasetId,
    runs: z.array(z.string().min(1)).min(2).max(10).describe('Run ids: the first is the baseline each other is compared with'),
    limit: pageLimit,
    cursor,
  },
};

const text = (value: string | null | undefined) => (value ? clip(value, fieldPreview) : undefined);

function runLine(run: Run): string {
  const { id, name, description, metadata, datasetVersion, itemCount, createdAt } = run;
  const shownMetadata = Object.keys(metadata).length > 0 ? clip(JSON.stringify(metadata), fieldPreview) : undefined;
  return compactJson({ id, name, description: text(description), metadata: shownMetadata, datasetVersion, itemCount, createdAt });
}

/** A run item as a record of a line: its output and error cut, its trace's figures and scores. */
function runItem(item: RunItemFigures): Record<string, unknown> {
  const { datasetItemId, traceId, failed, costUsd, latencyMs, scores } = item;
  const output = item.output === null || item.output === undefined ? undefined : clip(payloadText(item.output), fieldPreview);
  return { datasetItemId, traceId, failed, error: text(item.error), output, costUsd, latencyMs, scores };
}

/** Lines of a list answered whole by the API, from `offset`, with the call that reads on. */
function writeOffsetPage(out: BoundedAnswer, lines: string[], offset: number, more: (offset: number) => string): string | undefined {
  const shown = writeLines(out, lines.slice(offset));
  return offset + shown < lines.length ? `More: ${more(offset + shown)}` : undefined;
}

export function registerExperimentTools(server: McpServer, api: LoupeApi): void {
  server.registerTool(
    'list_datasets',
    {
      title: 'List datasets',
      description:
        'The datasets of the workspace (fixed cases a prompt or an agent is run over), by name: one JSON line each (id, name, description, created). list_runs reads the runs of one.',
      inputSchema: toolInputs.list_datasets,
      annotations: readOnly,
    },
    ({ name, offset = 0 }) =>
      answer(async () => {
        const datasets = (await api.listDatasets()).filter((d) => name === undefined || d.name.toLowerCase().includes(name.toLowerCase()));
        const out = new BoundedAnswer();
        out.add(
          `${datasets.length} datasets${name === undefined ? '' : ` named like ${JSON.stringify(name)}`}${offset > 0 ? `, from ${offset}` : ''}:`,
        );
        const lines = datasets.map(({ id, name: n, description, createdAt }) =>
          compactJson({ id, name: n, description: text(description), createdAt }),
        );
        const hint = writeOffsetPage(out, lines, offset, (next) => callText('list_datasets', { ...(name ? { name } : {}), offset: next }));
        return out.text(hint ?? (datasets.length === 0 ? 'No dataset matches.' : 'list_runs {"datasetId":"<id>"} reads its runs.'));
      }),
  );

  server.registerTool(
    'list_runs',
    {
      title: "List a dataset's runs",
      description:
        "The runs (experiments) of a dataset, newest first: one JSON line each (id, name, description, metadata such as the prompt version or model, dataset version, item count, created). get_run reads one run's figures; compare_runs compares runs.",
      inputSchema: toolInputs.list_runs,
      annotations: readOnly,
    },
    ({ datasetId: id, offset = 0 }) =>
      answer(async () => {
        const runs = await api.listRuns(id);
        const out = new BoundedAnswer();
        out.add(`${runs.length} runs (newest first)${offset > 0 ? `, from ${offset}` : ''}:`);
        const hint = writeOffsetPage(out, runs.map(runLine), offset, (next) => callText('list_runs', { datasetId: id, offset: next }));
        return out.text(hint ?? (runs.length === 0 ? 'The dataset has no runs.' : undefined));
      }),
  );

  server.registerTool(
    'get_run',
    {
      title: "A run's figures",
      description: `One run: its record; its figures over all its items (items, errors, total cost, latency p50/p95; per score name n, mean and 95% interval); then a page of its items, one JSON line each (dataset item, trace, failed, error, output cut at ${fieldPreview} characters, cost, latency, scores). get_trace reads an item's trace whole. Page on with the cursor the answer gives.`,
      inputSchema: toolInputs.get_run,
      annotations: readOnly,
    },
    (args) =>
      answer(async () => {
        const { datasetId: id, runId, limit = 20, cursor: page } = args;
        const { run, pagination } = await api.getRun(id, runId, { limit, cursor: page });
        const { figures, items, ...record } = run;
        const { scores, ...totals } = figures;
        const out = new BoundedAnswer();
        out.add(`Run ${runLine(record)}`);
        out.add(`figures: ${compactJson(totals)}`);
        for (const score of scores) out.add(`score ${compactJson(score)}`);
        out.add(`${items.length} items on this page:`);
        const next = pagination.nextCursor ? callText('get_run', { ...args, cursor: pagination.nextCursor }) : null;
        const hint = writeCursorPage(
          out,
          items.map((item) => compactJson(runItem(item))),
          'items',
          next,
        );
        return out.text(hint ?? 'No more items in this run.');
      }),
  );

  server.registerTool(
    'compare_runs',
    {
      title: 'Compare runs',
      description: `Runs of one dataset compared with the first (the baseline) over the items both have: per metric (each score, cost, latency) the means, the paired difference, its test (paired t, McNemar) with p-value, and a verdict (better, worse, no significant difference); then a page of items side by side, one JSON line each (per run in the order given: failed, error, output cut at ${fieldPreview} characters, cost, latency, scores; null where a run lacks the item). Page on with the cursor the answer gives.`,
      inputSchema: toolInputs.compare_runs,
      annotations: readOnly,
    },
    (args) =>
      answer(async () => {
        const { datasetId: id, runs, limit = 20, cursor: page } = args;
        const { comparison, pagination } = await api.compareRuns(id, { runs: runs.join(','), limit, cursor: page });
        const out = new BoundedAnswer();
        out.add(`Runs (the first is the baseline):`);
        writeLines(out, comparison.runs.map(runLine));
        out.add(`${comparison.metrics.length} metrics (each run against the baseline):`);
        const metrics = writeLines(out, comparison.metrics.map(compactJson));
        if (metrics < comparison.metrics.length) {
          return out.text(`${comparison.metrics.length - metrics} more metrics not shown: compare fewer runs at once.`);
        }
        out.add(`${comparison.items.length} items on this page:`);
        const lines = comparison.items.map(({ datasetItemId, runs: sides }) =>
          JSON.stringify({ datasetItemId, runs: sides.map((side) => (side === null ? null : runItem(side))) }),
        );
        const next = pagination.nextCursor ? callText('compare_runs', { ...args, cursor: pagination.nextCursor }) : null;
        const hint = writeCursorPage(out, lines, 'items', next);
        return out.text(hint ?? 'No more items.');
      }),
  );
}
