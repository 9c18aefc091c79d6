import { z } from 'zod';

/**
 * Full-text search of the trace list (GET /api/traces?q=): what a query asks, and the highlight
 * of a hit. The SQL that finds the traces and reads the hits' texts is in spans-table.ts
 * (`spanTextCondition`, `selectSearchHits`), over the text index of clickhouse/0015.
 *
 * `q` is words, every one of which must appear, or a phrase in double quotes, which must appear
 * as written; both case-insensitively (Unicode case, so `ÉTÉ` finds `été`), all in one span's
 * searched texts. A word is matched as text inside the span's texts, and the index finds the
 * spans holding each of its words (ASCII letters and digits, or runs of non-ASCII letters).
 */

/** The texts of a span a search reads: `searchIn` narrows to some of them. */
export const searchFields = ['names', 'input', 'output', 'statusMessage', 'attributes'] as const;
export type SearchField = (typeof searchFields)[number];

/** A parsed query: the texts that must each appear, and the span texts to look in. */
export const textSearchSchema = z.object({
  terms: z.array(z.string().min(1)).min(1),
  fields: z.array(z.enum(searchFields)).min(1),
});
export type TextSearch = z.infer<typeof textSearchSchema>;

/** At least one letter or digit: a query of punctuation alone would have no word for the index. */
export const searchableText = /[\p{L}\p{N}]/u;

/** `"a phrase"` is one term; otherwise each whitespace-separated word is a term. */
export function parseSearch(q: string, searchIn: readonly SearchField[] | undefined): TextSearch {
  const text = q.trim();
  const phrase = /^"(.*)"$/s.exec(text);
  const terms = phrase ? [phrase[1]!.trim()] : text.split(/\s+/);
  return { terms: [...new Set(terms.filter((term) => searchableText.test(term)))], fields: [...(searchIn ?? searchFields)] };
}

/** A hit's highlight: the matched snippet of one span's text, the matches as offsets into `text`. */
export const highlightSchema = z.object({
  spanId: z.string(),
  field: z.enum(searchFields),
  /** At most `snippetLength` characters around the first match, `…` where cut. */
  text: z.string(),
  /** Every match of a term inside `text`: [start, end) in UTF-16 code units (JavaScript string offsets). */
  matches: z.array(z.object({ start: z.number().int(), end: z.number().int() })),
});
export type Highlight = z.infer<typeof highlightSchema>;

export const snippetLength = 160;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The snippet of `text` around its first match of a term, the matches inside it; undefined when
 * no term is in `text`. Case-insensitive with Unicode case folding, offsets into the original
 * text (lowercasing first could change lengths).
 */
export function highlightOf(text: string, terms: readonly string[]): Omit<Highlight, 'spanId' | 'field'> | undefined {
  const pattern = new RegExp(terms.map(escapeRegExp).join('|'), 'giu');
  const all = [...text.matchAll(pattern)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const first = all[0];
  if (!first) return undefined;
  const before = Math.max(0, Math.min(first.start - Math.floor(snippetLength / 3), text.length - snippetLength));
  // Never cut a surrogate pair.
  const start = before > 0 && /[\uDC00-\uDFFF]/.test(text[before] ?? '') ? before - 1 : before;
  let end = Math.min(text.length, start + snippetLength);
  if (end < text.length && /[\uDC00-\uDFFF]/.test(text[end] ?? '')) end += 1;
  const lead = start > 0 ? '…' : '';
  const snippet = `${lead}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
  const matches = all
    .filter((m) => m.start >= start && m.end <= end)
    .map((m) => ({ start: m.start - start + lead.length, end: m.end - start + lead.length }));
  return { text: snippet, matches };
}
