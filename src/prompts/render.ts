/** Variable names a template may use: `{name}`, `{user_id}`, `{Step2}`. */
const identifier = /^[A-Za-z_][A-Za-z0-9_]*/;

export type TemplateValue = string | number | boolean;

export interface RenderedTemplate {
  text: string;
  /** Placeholder names in order of first appearance, each once. */
  placeholders: string[];
  /** Placeholders left as written because no variable was given for them. */
  missing: string[];
}

/**
 * Fills `{name}` placeholders. `{{` and `}}` stand for literal braces. A brace that opens no
 * placeholder (JSON examples in a prompt, `{ not a name }`) is kept as text rather than
 * refused: prompts are written by people, and a render must never fail on prose.
 */
export function renderTemplate(template: string, variables: Readonly<Record<string, TemplateValue>>): RenderedTemplate {
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
        if (Object.hasOwn(variables, name)) {
          text += String(variables[name]);
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

export interface RenderedPrompt {
  systemPrompt: string;
  humanPrompt: string | null;
  missing: string[];
  unused: string[];
}

/** Renders both templates of a prompt and reports what did not line up with the variables. */
export function renderPromptTemplates(
  templates: { systemPrompt: string; humanPrompt: string | null },
  variables: Readonly<Record<string, TemplateValue>>,
): RenderedPrompt {
  const system = renderTemplate(templates.systemPrompt, variables);
  const human = templates.humanPrompt === null ? null : renderTemplate(templates.humanPrompt, variables);
  const used = new Set([...system.placeholders, ...(human?.placeholders ?? [])]);
  const missing = [...new Set([...system.missing, ...(human?.missing ?? [])])];
  return {
    systemPrompt: system.text,
    humanPrompt: human?.text ?? null,
    missing,
    unused: Object.keys(variables).filter((name) => !used.has(name)),
  };
}
