import { z } from 'zod';

/**
 * The one pagination shape of every list (prompts, traces): `meta.pagination`. `total` counts
 * every match of the filters; `hasMore` says a later page has records; `nextCursor` pages on
 * without an offset where the list supports it.
 */
export const paginationSchema = z.object({
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
  hasMore: z.boolean(),
  /** The next page's opaque cursor where the list has one (traces); null on the last page and where it has none. */
  nextCursor: z.string().nullable(),
});
export type Pagination = z.infer<typeof paginationSchema>;

/** The `meta` fields of a list answer, for `envelope(data, paginationMeta)`. */
export const paginationMeta = { pagination: paginationSchema };

export function paginationOf(page: { limit: number; offset: number }, returned: number, total: number): Pagination {
  return { limit: page.limit, offset: page.offset, total, hasMore: page.offset + returned < total, nextCursor: null };
}
