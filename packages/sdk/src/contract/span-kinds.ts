/**
 * The 15 span kinds of SPEC.md, shared by the server (which validates them) and the client
 * (which types them): one list, so the two cannot drift apart.
 */
export const SPAN_KINDS = [
  'llm.chat',
  'llm.completion',
  'llm.embedding',
  'chain',
  'agent',
  'graph',
  'node',
  'edge',
  'workflow',
  'middleware',
  'tool',
  'retrieval',
  'rerank',
  'guardrail',
  'custom',
] as const;
export type SpanKind = (typeof SPAN_KINDS)[number];
