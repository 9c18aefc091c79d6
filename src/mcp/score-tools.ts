import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { BoundedAnswer, clip, compactJson } from './bounded-answer.js';
import type { LoupeApi, Score } from './loupe-api.js';
import { answer, callText, cursorListAnswer, isoTime, readOnly, writeLines } from './tool-answer.js';

/** The MCP tools that read scores: a filtered list, and figures per score name. */

/** Characters of a score's comment shown in a list. */
const commentPreview = 300;

const toolInputs = {
  list_scores: {
    name: z.string().min(1).optional().describe('The score name, exactly'),
    source: z.enum(['api', 'sdk', 'annotation', 'eval', 'otel']).optional(),
    dataType: z.enum(['numeric', 'categorical', 'boolean']).optional(),
    traceId: z.string().min(1).optional().describe("The trace's scores (with spanId: that span's)"),
    spanId: z.string().min(1).optional(),
    sessionId: z.string().min(1).optional().describe("A session's scores and the scores of its traces"),
    userId: z.string().min(1).optional().describe("The scores of the user's traces"),
    minValue: z.number().optional().describe('Numeric and boolean (1 true, 0 false) scores at or above'),
    maxValue: z.number().optional(),
    stringValue: z.string().min(1).optional().describe('Categorical scores of this label'),
    from: isoTime.optional().describe('Scores given at or after this time'),
    to: isoTime.optional().describe('Scores given before this time'),
    promptName: z.string().min(1).optional().describe('Scores of the spans that used this prompt, and of the traces holding them'),
    promptVersion: z.string().min(1).optional().describe('With promptName: of this version only'),
    limit: z.number().int().min(1).max(200).optional().describe('Scores per page, default 50'),
    cursor: z.string().optional().describe('The cursor of the previous answer, with the same filters'),
  },
  get_score_analytics: {
    name: z.string().min(1).optional().describe('Only this score name'),
    from: isoTime.optional().describe('Default 7 days before to'),
    to: isoTime.optional().describe('Default now'),
    interval: z.enum(['hour', 'day']).optional().describe('Buckets of the points over time, default day'),
  },
};

/** A score as one line: its value as given (a number, true/false, or the label). */
function scoreLine(score: Score): string {
  const { id, name, dataType, source, traceId, spanId, sessionId, authorId, environment, timestamp } = score;
  const value = dataType === 'categorical' ? score.stringValue : dataType === 'boolean' ? score.value === 1 : score.value;
  const comment = score.comment === null ? undefined : clip(score.comment, commentPreview);
  return compactJson({ id, name, dataType, value, comment, source, traceId, spanId, sessionId, authorId, environment, timestamp });
}

export function registerScoreTools(server: McpServer, api: LoupeApi): void {
  server.registerTool(
    'list_scores',
    {
      title: 'List scores',
      description: `Quality scores of the workspace (given by people, evaluators, SDKs or OpenTelemetry), newest first, one compact JSON line each (id, name, data type, value, comment cut at ${commentPreview} characters, source, the trace, span or session scored, time). Filters combine: name, source, data type, a trace, span, session or user, a value range or label, a time range, a prompt (and version). Page on with the cursor the answer gives.`,
      inputSchema: toolInputs.list_scores,
      annotations: readOnly,
    },
    (args) =>
      answer(async () => {
        const { limit = 50, ...filters } = args;
        const { scores, pagination } = await api.listScores({ ...filters, limit });
        return cursorListAnswer(scores.map(scoreLine), pagination, { one: 'score', many: 'scores' }, (next) =>
          callText('list_scores', { ...args, cursor: next }),
        );
      }),
  );

  server.registerTool(
    'get_score_analytics',
    {
      title: 'Score figures',
      description:
        "Per score name over a time range (default the last 7 days): its data type, count, mean (boolean: the share of true), median (numeric) and distribution of labels (categorical, boolean), one JSON line each; then each name's points over time (hourly or daily count and mean).",
      inputSchema: toolInputs.get_score_analytics,
      annotations: readOnly,
    },
    (query) =>
      answer(async () => {
        const analytics = await api.getScoreAnalytics(query);
        const out = new BoundedAnswer();
        out.add(`${analytics.scores.length} score names from ${analytics.from} to ${analytics.to}:`);
        const names = writeLines(
          out,
          analytics.scores.map(({ overTime: _, ...figures }) => compactJson(figures)),
        );
        if (names < analytics.scores.length) {
          return out.text(
            `${analytics.scores.length - names} more score names not shown: call again with name, or see them with list_scores.`,
          );
        }
        out.add(`Over time (${analytics.interval === 'hour' ? 'hourly' : 'daily'} points per name):`);
        const points = writeLines(
          out,
          analytics.scores.map((s) => `${s.name}: ${JSON.stringify(s.overTime)}`),
        );
        return out.text(
          points < analytics.scores.length
            ? `The points of ${analytics.scores.length - points} names are not shown: call again with name, or a narrower from/to.`
            : undefined,
        );
      }),
  );
}
