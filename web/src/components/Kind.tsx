import type { SpanKind } from '../api/types';

const kinds: Record<string, { label: string; group: string; title: string }> = {
  'llm.chat': { label: 'LLM', group: 'gen', title: 'LLM chat' },
  'llm.completion': { label: 'LLM', group: 'gen', title: 'LLM completion' },
  'llm.embedding': { label: 'EMB', group: 'gen', title: 'Embedding' },
  agent: { label: 'AGT', group: 'agent', title: 'Agent' },
  chain: { label: 'CHN', group: 'orch', title: 'Chain' },
  graph: { label: 'GRA', group: 'orch', title: 'Graph' },
  node: { label: 'NOD', group: 'orch', title: 'Node' },
  edge: { label: 'EDG', group: 'orch', title: 'Edge' },
  workflow: { label: 'WF', group: 'orch', title: 'Workflow' },
  middleware: { label: 'MID', group: 'orch', title: 'Middleware' },
  tool: { label: 'TL', group: 'tool', title: 'Tool' },
  retrieval: { label: 'RET', group: 'retr', title: 'Retrieval' },
  rerank: { label: 'RRK', group: 'retr', title: 'Rerank' },
  guardrail: { label: 'GRD', group: 'safe', title: 'Guardrail' },
  custom: { label: 'FN', group: 'other', title: 'Custom' },
};

export function KindIcon({ kind }: { kind: SpanKind | null | undefined }) {
  const k = kinds[kind ?? 'custom'] ?? kinds.custom!;
  return (
    <span className={`kind kind-${k.group}`} title={k.title} aria-label={k.title} role="img">
      {k.label}
    </span>
  );
}

export function kindGroup(kind: string | null | undefined): string {
  return (kinds[kind ?? 'custom'] ?? kinds.custom!).group;
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${status}`}>{status}</span>;
}
