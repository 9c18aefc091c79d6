/**
 * The prompt template grammar, shared by the server (POST /api/prompt/:id/render) and the
 * client (`render`), so a template reads the same on both sides.
 *
 * - `{name}` is a placeholder when `name` is an identifier (`[A-Za-z_][A-Za-z0-9_]*`).
 * - `{{` and `}}` stand for literal braces.
 * - Any other brace (JSON examples in a prompt, `{ not a name }`) is kept as text rather than
 *   refused: prompts are written by people, and a render must never fail on prose.
 * - A string value is inserted as it is; any other value as its JSON (numbers and booleans read
 *   as they are written: `36`, `0.5`, `false`; an object as `{"a":1}`).
 * - A placeholder without a value (no own property of that name, or `undefined`) is left as
 *   written and reported in `missing`. Values are not rendered again.
 */

/** Variable names a template may use: `{name}`, `{user_id}`, `{Step2}`. */
const identifier = /^[A-Za-z_][A-Za-z0-9_]*/;

export interface RenderedTemplate {
  text: string;
  /** Placeholder names in order of first appearance, each once. */
  placeholders: string[];
  /** Placeholders left as written because no value was given for them, each once. */
  missing: string[];
}

/** How a value reads in the rendered text. */
export function templateText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value) ?? String(value);
}

export function renderTemplate(template: string, variables: Readonly<Record<string, unknown>>): RenderedTemplate {
  let text = '';
  const placeholders: string[] = [];
  const missing: string[] = [];
  let i = 0;
  while (i < template.length) {
    const ch = template[i]!;
    const next = template[i + 1];
    if ((ch === '{' && next === '{') || (ch === '}' && next === '}')) {
      text += ch;
      i += 2;
      continue;
    }
    if (ch === '{') {
      const name = identifier.exec(template.slice(i + 1, i + 1 + 256))?.[0];
      if (name !== undefined && template[i + 1 + name.length] === '}') {
        if (!placeholders.includes(name)) placeholders.push(name);
        if (Object.hasOwn(variables, name) && variables[name] !== undefined) {
          text += templateText(variables[name]);
        } else {
          if (!missing.includes(name)) missing.push(name);
          text += `{${name}}`;
        }
        i += name.length + 2;
        continue;
      }
    }
    text += ch;
    i += 1;
  }
  return { text, placeholders, missing };
}

/** The names of a template's placeholders, in order of first use. */
export function templateVariables(template: string): string[] {
  return renderTemplate(template, {}).placeholders;
}
