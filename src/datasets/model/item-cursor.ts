import { validationError } from '../../http/wire/errors.js';

/** The opaque cursor of a page of items: the last item id of the page before, base64url. */

export const encodeItemCursor = (itemId: string): string => Buffer.from(itemId, 'utf8').toString('base64url');

/** The item id the cursor carries, or undefined when it is not one of ours. */
export function decodeItemCursor(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const itemId = Buffer.from(cursor, 'base64url').toString('utf8');
  return itemId.length >= 1 && itemId.length <= 128 && encodeItemCursor(itemId) === cursor ? itemId : undefined;
}

/** The item id a page starts after: none without a cursor; a cursor not of this list is a 400 naming `query.cursor`. */
export function afterIdOfCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const afterId = decodeItemCursor(cursor);
  if (afterId === undefined)
    throw validationError('Invalid request: query.cursor: is not a cursor of this list', [
      { path: 'query.cursor', message: 'is not a cursor of this list' },
    ]);
  return afterId;
}
