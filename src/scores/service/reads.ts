import { notFound, validationError } from '../../http/wire/errors.js';
import type { ListScoresQuery, Score } from '../api/schemas.js';
import { toScore } from '../model/score-shape.js';
import { toStoredTime } from '../model/stored-time.js';
import { selectScorePage, selectScoresByIds, tombstoneScore } from '../tables/scores-table.js';
import type { ScoreStores } from './ingest.js';

/** GET /api/scores, GET and DELETE /api/scores/:id. */

interface Cursor {
  timestamp: string;
  id: string;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

function decodeCursor(text: string): Cursor {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString()) as Partial<Cursor>;
    if (
      typeof value.timestamp === 'string' &&
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/.test(value.timestamp) &&
      typeof value.id === 'string'
    )
      return { timestamp: value.timestamp, id: value.id };
  } catch {
    // answered below
  }
  throw validationError('Invalid request: querystring.cursor: is not a cursor this API returned', [
    { path: 'querystring.cursor', message: 'is not a cursor this API returned' },
  ]);
}

export async function listScores(stores: ScoreStores, workspaceId: string, query: ListScoresQuery) {
  const { limit, cursor, from, to, ...rest } = query;
  const filter = { ...rest, ...(from !== undefined && { from: toStoredTime(from) }), ...(to !== undefined && { to: toStoredTime(to) }) };
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const rows = await selectScorePage(stores.clickhouse, { workspaceId, filter, after, fetch: limit + 1 });
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  const last = page.at(-1);
  return {
    items: page.map(toScore),
    pagination: { limit, hasMore: more, nextCursor: more && last ? encodeCursor({ timestamp: last.timestamp_text, id: last.id }) : null },
  };
}

export async function getScore(stores: ScoreStores, workspaceId: string, id: string): Promise<Score> {
  const [row] = await selectScoresByIds(stores.clickhouse, { workspaceId, ids: [id] });
  if (!row) throw notFound('Score', { id });
  return toScore(row);
}

export async function deleteScore(stores: ScoreStores, workspaceId: string, id: string) {
  await getScore(stores, workspaceId, id);
  await tombstoneScore(stores.clickhouse, { workspaceId, id, version: stores.clock.next().toString() });
  return { id, deleted: true as const };
}
