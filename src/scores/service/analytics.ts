import type { ScoreAnalytics, ScoreAnalyticsQuery } from '../api/analytics-schemas.js';
import { toStoredTime } from '../model/stored-time.js';
import { selectScoreNameFigures, selectScoresOverTime } from '../tables/score-summary-table.js';
import type { ScoreStores } from './ingest.js';

const week = 7 * 24 * 3600 * 1000;

/** GET /api/scores/analytics: two aggregate statements in the engine (per name and label; per name and bucket). */
export async function scoreAnalytics(stores: ScoreStores, workspaceId: string, query: ScoreAnalyticsQuery): Promise<ScoreAnalytics> {
  const to = query.to ?? new Date().toISOString();
  const from = query.from ?? new Date(Date.parse(to) - week).toISOString();
  const params = { workspaceId, from: toStoredTime(from), to: toStoredTime(to), name: query.name };
  const [figures, buckets] = await Promise.all([
    selectScoreNameFigures(stores.clickhouse, params),
    selectScoresOverTime(stores.clickhouse, { ...params, interval: query.interval }),
  ]);
  const byName = new Map<string, ScoreAnalytics['scores'][number]>();
  for (const row of figures) {
    const entry = byName.get(row.name) ?? {
      name: row.name,
      dataType: row.data_type,
      count: 0,
      mean: 0,
      p50: row.p50,
      distribution: row.data_type === 'numeric' ? null : {},
      overTime: [],
    };
    entry.mean = (entry.mean * entry.count + row.mean * row.n) / (entry.count + row.n);
    entry.count += row.n;
    if (entry.distribution) entry.distribution[row.label] = row.n;
    byName.set(row.name, entry);
  }
  for (const bucket of buckets) {
    byName.get(bucket.name)?.overTime.push({ bucket: bucket.bucket, count: bucket.n, mean: bucket.mean });
  }
  return { from, to, interval: query.interval, scores: [...byName.values()] };
}
