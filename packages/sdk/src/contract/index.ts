/** What the server and the client must agree on: span kinds and the template grammar. */
export { SPAN_KINDS, type SpanKind } from './span-kinds.js';
export { renderTemplate, templateText, templateVariables, type RenderedTemplate } from './template.js';
