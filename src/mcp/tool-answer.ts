import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { BoundedAnswer, answerLimit } from './bounded-answer.js';
import { LoupeApiError, type CursorPage } from './loupe-api.js';

/**
 * What every tool's answer shares: an API error as a tool error, the text of a call an answer
 * names to read on, and pages of one-line records cut to the answer's bound.
 */

function errorResult(error: unknown): CallToolResult {
  if (error instanceof LoupeApiError) {
    // Validation problems the message does not already name are listed with their paths.
    const issues = (Array.isArray(error.details.issues) ? (error.details.issues as Array<{ path?: unknown; message?: unknown }>) : [])
      .map((issue) => `${String(issue.path)}: ${String(issue.message)}`)
      .filter((issue) => !error.message.includes(issue))
      .map((issue) => `\n  - ${issue}`)
      .join('');
    return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}${issues}` }] };
  }
  throw error;
}

/** Runs a tool's read; an error of the API comes back as a tool error carrying the envelope's code and message. */
export async function answer(read: () => Promise<string>): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: await read() }] };
  } catch (error) {
    return errorResult(error);
  }
}

export const isoTime = z.string().describe('An ISO 8601 time, e.g. 2026-01-31T00:00:00Z');
export const offsetSchema = z.number().int().min(0).optional();

/** Every tool only reads, and only the workspace's own data. */
export const readOnly = { readOnlyHint: true, openWorldHint: false };

/** A call as an answer names it: `tool {"arg":…}`. */
export const callText = (tool: string, args: Record<string, unknown>) => `${tool} ${JSON.stringify(args)}`;

/**
 * The lines of one cursor page, as many as the answer holds, with the hint to read on: a lower
 * limit when the bound cut the page, else the call with the next cursor (`nextCall`).
 */
export function writeCursorPage(out: BoundedAnswer, lines: string[], noun: string, nextCall: string | null): string | undefined {
  const shown = writeLines(out, lines);
  if (shown < lines.length) {
    return `${lines.length - shown} more ${noun} of this page not shown (the answer is cut at ${answerLimit} characters): call again with limit ${Math.max(1, shown)}, then page with its cursor, or narrow the filters.`;
  }
  if (nextCall) return `More ${noun}: ${nextCall}`;
  return undefined;
}

/**
 * A filtered list's answer: how many records the page holds, their lines, and the hint to read
 * on (the next cursor's call, a lower limit), or that nothing (more) matches.
 */
export function cursorListAnswer(
  lines: string[],
  pagination: CursorPage,
  noun: { one: string; many: string },
  nextCall: (cursor: string) => string,
): string {
  const out = new BoundedAnswer();
  out.add(`${lines.length} ${noun.many}${pagination.hasMore ? ' (more on the next page)' : ''}:`);
  const hint = writeCursorPage(out, lines, noun.many, pagination.nextCursor ? nextCall(pagination.nextCursor) : null);
  if (hint) return out.text(hint);
  return out.text(lines.length === 0 ? `No ${noun.one} matches: widen the time range or drop a filter.` : `No more ${noun.many} match.`);
}

/** Adds lines until one does not fit; answers how many were added. */
export function writeLines(out: BoundedAnswer, lines: Iterable<string>): number {
  let shown = 0;
  for (const line of lines) {
    if (!out.add(line)) break;
    shown += 1;
  }
  return shown;
}

/** Any value as text: a string as it is, anything else as its JSON. */
export const payloadText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
