/**
 * Every tool answers within a bounded size, so one call never floods an agent's context: lines
 * are added until the budget is reached, and what was left out is named with how to get it (a
 * filter, a cursor, an offset, a span id).
 */

/** The most characters one tool answer holds, hint included (about 32 KB of text). */
export const answerLimit = 32_000;

/** Room kept at the end of every answer for the hint that says how to read on. */
const hintRoom = 1_000;

export class BoundedAnswer {
  private readonly lines: string[] = [];
  private used = 0;
  /** True once a line did not fit: the answer is cut. */
  cut = false;

  constructor(private readonly limit: number = answerLimit) {}

  /** Characters still free before the hint's room. */
  get free(): number {
    return Math.max(0, this.limit - hintRoom - this.used);
  }

  /** Adds the line when it fits (counting its line break); answers whether it did. Once one is refused, all later ones are. */
  add(line: string): boolean {
    if (this.cut || line.length + 1 > this.free) {
      this.cut = true;
      return false;
    }
    this.lines.push(line);
    this.used += line.length + 1;
    return true;
  }

  /** The answer, with the hint (cut to its room) at the end when there is one. */
  text(hint?: string): string {
    const body = this.lines.join('\n');
    if (!hint) return body;
    const room = this.limit - body.length - 2;
    return `${body}\n\n${hint.length > room ? `${hint.slice(0, Math.max(0, room - 1))}…` : hint}`;
  }
}

/** A value as one line of compact JSON, leaving out absent fields (null, undefined, empty arrays). */
export function compactJson(value: Record<string, unknown>): string {
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (field === null || field === undefined || (Array.isArray(field) && field.length === 0)) continue;
    kept[key] = field;
  }
  return JSON.stringify(kept);
}

/** A text cut to `max` characters, marked when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The part of a long text from `offset`, at most `size` characters, and where the next part starts (null at the end). */
export function textPage(text: string, offset: number, size: number): { part: string; next: number | null } {
  const end = Math.min(text.length, offset + size);
  return { part: text.slice(offset, end), next: end < text.length ? end : null };
}
