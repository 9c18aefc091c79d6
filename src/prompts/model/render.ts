import { renderTemplate } from '../../contract/index.js';

// The template grammar and its one renderer are the contract's (src/contract/template.ts).
export { renderTemplate, type RenderedTemplate } from '../../contract/index.js';

/** The values the render endpoint takes (its body schema); the renderer takes any value. */
export type TemplateValue = string | number | boolean;

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
