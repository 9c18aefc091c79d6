import { useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import { KindIcon, StatusBadge } from '../../components/Kind';
import { ErrorState, Loading } from '../../components/states';
import { formatDuration } from '../../lib/timeline';
import { formatInt, formatTime, formatUsd } from '../../lib/format';
import { SpanTree } from './SpanTree';
import { SpanPanel } from './SpanPanel';
import { useItemParam } from '../../lib/item-param';
import { itemPath } from '../../lib/paths';
import { Clamped, Clipped, ClippedLink } from '../../components/Clipped';
import { Annotate, ScoreList } from '../quality/Scores';

export function TracePage() {
  const traceId = useItemParam('traces');
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  // The tree only: a span's input and output are fetched when it is selected (SpanPanel).
  const trace = useQuery({
    queryKey: ['trace', traceId, 'tree'],
    queryFn: ({ signal }) => call(api.GET('/api/traces/{id}/tree', { params: { path: { id: traceId } }, signal })),
    select: (body) => body.data,
  });
  const remove = useMutation({
    mutationFn: async () => {
      // A read of this trace still under way (the selected span) would be answered 404 once the
      // trace is gone: it is cancelled first.
      await queryClient.cancelQueries({ queryKey: ['trace', traceId] });
      return call(api.DELETE('/api/traces/{id}', { params: { path: { id: traceId } } }));
    },
    onSuccess: async () => {
      // Leave the page first: a query still observed would refetch the deleted trace.
      void navigate('/traces', { replace: true });
      // Its tree and every span fetched, by the key prefix.
      queryClient.removeQueries({ queryKey: ['trace', traceId] });
      await queryClient.invalidateQueries({ queryKey: ['traces'] });
    },
  });
  const spans = trace.data?.spans;
  const byId = useMemo(() => new Map((spans ?? []).map((s) => [s.spanId, s])), [spans]);
  const requested = params.get('span') ?? undefined;
  const selected = (requested && byId.get(requested)) || spans?.find((s) => !s.parentSpanId || !byId.has(s.parentSpanId)) || spans?.[0];

  const select = (spanId: string) => {
    const next = new URLSearchParams(params);
    next.set('span', spanId);
    setParams(next, { replace: true });
  };

  if (trace.isPending) return <Loading label="Loading trace…" />;
  if (trace.isError) return <ErrorState error={trace.error} retry={() => trace.refetch()} />;
  const t = trace.data;
  return (
    <div className="page page-trace">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/traces">Traces</Link> <span aria-hidden="true">/</span> <Clipped text={t.name || t.traceId} />
      </nav>
      <header className="page-head">
        <div>
          <h1 className="title-with-icon">
            <KindIcon kind={t.traceKind} /> <Clamped text={t.name || t.traceId} /> <StatusBadge status={t.status} />
          </h1>
          <p className="muted small">
            <code>{t.traceId}</code> · {formatTime(t.startTime)} · {t.source}
            {t.environment ? ` · ${t.environment}` : ''}
            {t.service ? ` · ${t.service}` : ''}
            {t.userId && (
              <>
                {' · user '}
                <ClippedLink to={`/traces?userId=${encodeURIComponent(t.userId)}`} text={t.userId} />
              </>
            )}
            {t.sessionId && (
              <>
                {' · session '}
                <ClippedLink to={itemPath('sessions', t.sessionId)} text={t.sessionId} />
              </>
            )}
          </p>
          {t.tags.length > 0 && (
            <div className="tags" aria-label="Tags">
              {t.tags.map((tag) => (
                <span key={tag} className="badge tag">
                  {tag}
                </span>
              ))}
            </div>
          )}
        </div>
        <button className="button danger" onClick={() => setConfirming(true)}>
          Delete trace
        </button>
      </header>
      <dl className="kpis kpis-compact" aria-label="Trace totals">
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(t.durationMs)}</dd>
        </div>
        <div>
          <dt>Spans</dt>
          <dd data-testid="trace-spans">{formatInt(t.spanCount)}</dd>
        </div>
        <div>
          <dt>Errors</dt>
          <dd className={t.errorCount ? 'text-error' : undefined}>{formatInt(t.errorCount)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd data-testid="trace-tokens">{formatInt(t.totalTokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd data-testid="trace-cost">{formatUsd(t.costUsd)}</dd>
        </div>
        <div>
          <dt>Model</dt>
          <dd>{t.model ?? '—'}</dd>
        </div>
      </dl>
      <section className="trace-scores" aria-labelledby="trace-scores-title">
        <h2 id="trace-scores-title">Scores</h2>
        <ScoreList scores={t.scores} label="Trace scores" traceId={t.traceId} />
        <Annotate target={{ traceId: t.traceId }} scores={t.scores} label="Annotate this trace" />
      </section>
      <div className="trace-split">
        <SpanTree spans={t.spans} selectedId={selected?.spanId} onSelect={select} />
        <div className="trace-side">
          {selected ? (
            <SpanPanel key={selected.spanId} traceId={t.traceId} node={selected} />
          ) : (
            <p className="muted">This trace has no spans.</p>
          )}
        </div>
      </div>
      {confirming && (
        <div className="modal-backdrop">
          <div className="modal" role="dialog" aria-modal="true" aria-labelledby="delete-title">
            <h2 id="delete-title">Delete this trace?</h2>
            <p>
              “{t.name || t.traceId}” and its {formatInt(t.spanCount)} spans are deleted for good. This cannot be undone.
            </p>
            {remove.isError && <ErrorState error={remove.error} />}
            <div className="modal-actions">
              <button className="button" onClick={() => setConfirming(false)} autoFocus>
                Cancel
              </button>
              <button className="button danger" onClick={() => remove.mutate()} disabled={remove.isPending}>
                {remove.isPending ? 'Deleting…' : 'Delete'}
              </button>
            </div>
          </div>
        </div>
      )}
    </div>
  );
}
