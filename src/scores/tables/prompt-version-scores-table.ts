import { z } from 'zod';
import { defineQuery } from '../../stores/clickhouse-query.js';
import { storedTime, workspaceId } from './score-params.js';

/**
 * The SQL on `prompt_version_scores` (clickhouse/0025): per prompt version and live score on a
 * span of that version or on a trace holding one, a row with the score's value and the start of
 * each span of the version it counts through. Materialized views keep it from the scores'
 * rows (`score_summary`) and the prompt spans' rows (`prompt_spans`, by trace), whichever lands
 * last, so a score sent before its trace counts once the trace lands; a correction, a deleted
 * score or span, a span moved to another version rewrite or hide the pair's row. Read with
 * FINAL, tombstones dropped, the window applied after it: one live row per version and score,
 * so the figures stay exact without joining the workspace's scores to the prompt's spans.
 */

const dataType = z.enum(['numeric', 'categorical', 'boolean']);

/** The widest window DateTime64(6) holds, for a window that names no bound. */
const earliest = '1900-01-01 00:00:00.000000';
const latest = '2299-12-31 23:59:59.999999';

const versionFigureRow = z.object({
  prompt_name: z.string(),
  version: z.string(),
  name: z.string(),
  data_type: dataType,
  category: z.string(),
  n: z.coerce.number(),
  mean: z.number(),
  /** Sample variance; null with one score. */
  variance: z.number().nullable(),
});

/**
 * Per prompt, version, score name, type and category (categorical only), the count, mean and
 * sample variance of the live scores on the version's spans starting strictly inside the window,
 * or on traces holding one: of every version of `promptName`, or of the `versions` named (both
 * sides of a comparison in one statement). A trace score counts once per version however many of
 * the version's spans its trace holds.
 */
export const selectPromptScoreFigures = defineQuery({
  name: 'selectPromptScoreFigures',
  params: z
    .object({
      workspaceId,
      promptName: z.string().optional(),
      versions: z
        .array(z.object({ name: z.string(), version: z.string() }))
        .min(1)
        .optional(),
      startAfter: storedTime.optional(),
      startBefore: storedTime.optional(),
    })
    .refine((p) => (p.promptName === undefined) !== (p.versions === undefined), 'name either a prompt or its versions'),
  row: versionFigureRow,
  sql: ({ workspaceId, promptName, versions, startAfter, startBefore }) => {
    const promptNames = versions ? [...new Set(versions.map((v) => v.name))] : [promptName!];
    const promptVersions = versions ? [...new Set(versions.map((v) => v.version))] : [];
    // The key's ranges: the prompts, then (when named) their versions; the pairs themselves after.
    const which = versions
      ? `prompt_name IN {promptNames:Array(String)} AND prompt_version IN {promptVersions:Array(String)}
         AND has(arrayZip({pairNames:Array(String)}, {pairVersions:Array(String)}), (prompt_name, prompt_version))`
      : 'prompt_name IN {promptNames:Array(String)}';
    const windowed = startAfter !== undefined || startBefore !== undefined;
    return {
      values: {
        workspaceId,
        promptNames,
        promptVersions,
        pairNames: versions?.map((v) => v.name) ?? [],
        pairVersions: versions?.map((v) => v.version) ?? [],
        startAfter: startAfter ?? earliest,
        startBefore: startBefore ?? latest,
      },
      query: `
        SELECT prompt_name, prompt_version AS version, name, data_type, if(data_type = 'categorical', string_value, '') AS category,
          count() AS n, avg(value) AS mean, if(n > 1, varSamp(value), NULL) AS variance
        FROM prompt_version_scores FINAL
        WHERE workspace_id = {workspaceId:String} AND ${which} AND is_deleted = 0
          ${windowed ? "AND arrayExists(t -> t > {startAfter:DateTime64(6, 'UTC')} AND t < {startBefore:DateTime64(6, 'UTC')}, starts)" : ''}
        GROUP BY prompt_name, version, name, data_type, category
        ORDER BY prompt_name, version, name, category`,
    };
  },
});
