import { useState, type FormEvent } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import type { TraceListItem, TraceListQuery } from '../../api/types';
import {
  parseTraceView,
  serverSortKeys,
  sortRows,
  traceViewToSearch,
  type SortKey,
  type TraceFilterKey,
  type TraceView,
} from '../../lib/filters';
import { formatDuration } from '../../lib/timeline';
import { formatInt, formatRelative, formatTime, formatUsd, fromLocalInput, toLocalInput } from '../../lib/format';
import { KindIcon, StatusBadge } from '../../components/Kind';
import { ErrorState, FirstTraceGuide, Loading } from '../../components/states';
import { itemPath } from '../../lib/paths';
import { Clipped, ClippedLink } from '../../components/Clipped';

/**
 * The text filters of the list. Typed against the generated query type, so a filter the API
 * does not have does not compile.
 */
type TextFilterKey = Exclude<keyof TraceListQuery & TraceFilterKey, 'status' | 'startAfter' | 'startBefore'>;
/** The score bounds the API takes as numbers. */
type ScoreBoundKey = 'scoreMin' | 'scoreMax';
const textFilters: Array<{ key: TextFilterKey; label: string; placeholder: string; type?: string; signed?: boolean }> = [
  { key: 'q', label: 'Search', placeholder: 'words or "a phrase"', type: 'search' },
  { key: 'name', label: 'Name', placeholder: 'trace name' },
  { key: 'source', label: 'Source', placeholder: 'sdk, otel…' },
  { key: 'environment', label: 'Environment', placeholder: 'production' },
  { key: 'sessionId', label: 'Session', placeholder: 'session id' },
  { key: 'userId', label: 'User', placeholder: 'user id' },
  { key: 'tag', label: 'Tag', placeholder: 'tag' },
  { key: 'model', label: 'Model', placeholder: 'gpt-4o' },
  { key: 'service', label: 'Service', placeholder: 'service.name' },
  { key: 'minDurationMs', label: 'Min duration (ms)', placeholder: '1000', type: 'number' },
  { key: 'minCostUsd', label: 'Min cost (USD)', placeholder: '0.01', type: 'number' },
  { key: 'score', label: 'Score', placeholder: 'score name' },
  { key: 'scoreMin', label: 'Score at least', placeholder: '0', type: 'number', signed: true },
  { key: 'scoreMax', label: 'Score at most', placeholder: '1', type: 'number', signed: true },
  { key: 'scoreValue', label: 'Score label', placeholder: 'true, good…' },
];

const columns: Array<{ key: SortKey; label: string }> = [
  { key: 'startTime', label: 'Started' },
  { key: 'durationMs', label: 'Duration' },
  { key: 'spanCount', label: 'Spans' },
  { key: 'errorCount', label: 'Errors' },
  { key: 'totalTokens', label: 'Tokens' },
  { key: 'costUsd', label: 'Cost' },
];

const formatMean = (mean: number) => (Number.isInteger(mean) ? String(mean) : mean.toFixed(2));

type Highlight = NonNullable<TraceListItem['highlight']>;
const fieldLabels: Record<Highlight['field'], string> = {
  names: 'name',
  input: 'input',
  output: 'output',
  statusMessage: 'status',
  attributes: 'attribute',
};

/** A search hit's snippet, its matches marked. */
function SearchHighlight({ highlight }: { highlight: Highlight }) {
  const parts: Array<{ text: string; match: boolean }> = [];
  let at = 0;
  for (const { start, end } of highlight.matches) {
    if (start > at) parts.push({ text: highlight.text.slice(at, start), match: false });
    parts.push({ text: highlight.text.slice(start, end), match: true });
    at = end;
  }
  if (at < highlight.text.length) parts.push({ text: highlight.text.slice(at), match: false });
  return (
    <div className="search-highlight muted" data-highlight={highlight.field}>
      <span className="badge">{fieldLabels[highlight.field]}</span>{' '}
      {parts.map((part, i) => (part.match ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>))}
    </div>
  );
}

export function TracesPage() {
  const [params, setParams] = useSearchParams();
  const view = parseTraceView(params);
  const [live, setLive] = useState(false);
  const setView = (next: TraceView) => setParams(new URLSearchParams(traceViewToSearch(next)));

  // The text filters that are set, typed as the API's query names them.
  const textQuery: Partial<Record<Exclude<TextFilterKey, ScoreBoundKey>, string>> = {};
  const scoreBounds: Partial<Record<ScoreBoundKey, number>> = {};
  for (const f of textFilters) {
    const value = view.filters[f.key];
    if (!value) continue;
    if (f.key === 'scoreMin' || f.key === 'scoreMax') {
      if (Number.isFinite(Number(value))) scoreBounds[f.key] = Number(value);
    } else textQuery[f.key] = value;
  }
  const query: TraceListQuery = {
    limit: view.pageSize,
    offset: (view.page - 1) * view.pageSize,
    ...(view.filters.status ? { status: view.filters.status as TraceListQuery['status'] } : {}),
    ...textQuery,
    ...scoreBounds,
    ...(view.filters.startAfter ? { startAfter: view.filters.startAfter } : {}),
    ...(view.filters.startBefore ? { startBefore: view.filters.startBefore } : {}),
    ...(serverSortKeys.includes(view.sort) ? { sort: `${view.descending ? '-' : ''}${view.sort}` as TraceListQuery['sort'] } : {}),
  };
  const list = useQuery({
    queryKey: ['traces', query],
    queryFn: () => call(api.GET('/api/traces/', { params: { query } })),
    placeholderData: keepPreviousData,
    refetchInterval: live ? 5_000 : false,
  });

  function applyFilters(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const filters: TraceView['filters'] = {};
    for (const [key, value] of form.entries()) {
      if (typeof value !== 'string' || !value.trim()) continue;
      filters[key as TraceFilterKey] = key === 'startAfter' || key === 'startBefore' ? fromLocalInput(value) : value.trim();
    }
    setView({ ...view, filters, page: 1 });
  }

  function sortBy(key: SortKey) {
    setView({ ...view, sort: key, descending: view.sort === key ? !view.descending : true });
  }

  const pagination = list.data?.meta.pagination;
  // One column per score name on this page: its mean on each trace (boolean: the share of true).
  const scoreNames = [...new Set((list.data?.data ?? []).flatMap((t) => Object.keys(t.scores ?? {})))].sort();
  const rows = list.data ? sortRows(list.data.data, view.sort, view.descending) : [];
  const filtered = Object.keys(view.filters).length > 0;
  const formKey = params.toString();

  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Traces</h1>
          <p className="muted">Every trace of this workspace, newest first.</p>
        </div>
        <label className="toggle">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} />
          <span>Auto-refresh (5 s)</span>
        </label>
      </header>

      <form className="filters" onSubmit={applyFilters} key={formKey} data-filters={formKey} aria-label="Trace filters">
        <label className="field">
          <span>Status</span>
          <select name="status" defaultValue={view.filters.status ?? ''}>
            <option value="">Any</option>
            <option value="completed">completed</option>
            <option value="error">error</option>
            <option value="running">running</option>
          </select>
        </label>
        {textFilters.map((f) => (
          <label className="field" key={f.key}>
            <span>{f.label}</span>
            <input
              name={f.key}
              type={f.type ?? 'text'}
              step={f.type === 'number' ? 'any' : undefined}
              min={f.type === 'number' && !f.signed ? 0 : undefined}
              defaultValue={view.filters[f.key] ?? ''}
              placeholder={f.placeholder}
            />
          </label>
        ))}
        <label className="field">
          <span>Started after</span>
          <input type="datetime-local" name="startAfter" defaultValue={toLocalInput(view.filters.startAfter)} />
        </label>
        <label className="field">
          <span>Started before</span>
          <input type="datetime-local" name="startBefore" defaultValue={toLocalInput(view.filters.startBefore)} />
        </label>
        <div className="filter-actions">
          <button className="button primary" type="submit">
            Apply
          </button>
          {filtered && (
            <button className="button" type="button" onClick={() => setView({ ...view, filters: {}, page: 1 })}>
              Clear
            </button>
          )}
        </div>
      </form>

      {list.isPending ? (
        <Loading label="Loading traces…" />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => list.refetch()} />
      ) : rows.length === 0 && !filtered && view.page === 1 ? (
        <FirstTraceGuide />
      ) : (
        <>
          <div className="table-wrap">
            <table className="table" aria-label="Traces" aria-busy={list.isFetching}>
              <thead>
                <tr>
                  <th scope="col">Status</th>
                  <th scope="col">Name</th>
                  {columns.map((c) => (
                    <th
                      scope="col"
                      key={c.key}
                      className="num"
                      aria-sort={view.sort === c.key ? (view.descending ? 'descending' : 'ascending') : 'none'}
                    >
                      <button className="sort" onClick={() => sortBy(c.key)}>
                        {c.label}
                        <span aria-hidden="true">{view.sort === c.key ? (view.descending ? ' ↓' : ' ↑') : ''}</span>
                      </button>
                    </th>
                  ))}
                  {scoreNames.map((name) => (
                    <th scope="col" key={`score-${name}`} className="num" data-score-column={name}>
                      <Clipped text={name} inCell />
                    </th>
                  ))}
                  <th scope="col">Model</th>
                  <th scope="col">User</th>
                  <th scope="col">Session</th>
                  <th scope="col">Source</th>
                </tr>
              </thead>
              <tbody>
                {rows.length === 0 && (
                  <tr>
                    <td colSpan={13} className="muted center">
                      No trace matches these filters.
                    </td>
                  </tr>
                )}
                {rows.map((t) => (
                  <tr key={t.traceId} data-trace-id={t.traceId}>
                    <td>
                      <StatusBadge status={t.status} />
                    </td>
                    <td>
                      <div className="name-cell">
                        <KindIcon kind={t.traceKind} />
                        <ClippedLink to={itemPath('traces', t.traceId)} text={t.name || t.traceId} inCell />
                        {t.tags.slice(0, 3).map((tag) => (
                          <span key={tag} className="badge tag">
                            {tag}
                          </span>
                        ))}
                      </div>
                      {t.highlight && <SearchHighlight highlight={t.highlight} />}
                    </td>
                    <td className="num" title={formatTime(t.startTime)}>
                      {formatRelative(t.startTime)}
                    </td>
                    <td className="num">{formatDuration(t.durationMs)}</td>
                    <td className="num">{formatInt(t.spanCount)}</td>
                    <td className={`num${t.errorCount ? ' text-error' : ''}`}>{formatInt(t.errorCount)}</td>
                    <td className="num">{formatInt(t.totalTokens)}</td>
                    <td className="num">{formatUsd(t.costUsd)}</td>
                    {scoreNames.map((name) => {
                      const score = t.scores?.[name];
                      return (
                        <td
                          key={`score-${name}`}
                          className="num"
                          data-score={name}
                          title={score ? `mean of ${formatInt(score.n)} score${score.n === 1 ? '' : 's'}` : undefined}
                        >
                          {score ? formatMean(score.mean) : <span className="muted">—</span>}
                        </td>
                      );
                    })}
                    <td className="muted">{t.model ? <Clipped text={t.model} inCell /> : '—'}</td>
                    <td>
                      {t.userId ? <ClippedLink to={itemPath('users', t.userId)} text={t.userId} /> : <span className="muted">—</span>}
                    </td>
                    <td>
                      {t.sessionId ? (
                        <ClippedLink to={itemPath('sessions', t.sessionId)} text={t.sessionId} />
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td className="muted">
                      <Clipped text={[t.service, t.source, t.environment].filter(Boolean).join(' · ')} inCell />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {pagination && (
            <nav className="pager" aria-label="Pages">
              <span className="muted" data-testid="trace-total">
                {pagination.total === 0
                  ? '0 traces'
                  : `${formatInt(pagination.offset + 1)}–${formatInt(pagination.offset + rows.length)} of ${formatInt(pagination.total)} traces`}
                {!serverSortKeys.includes(view.sort) && ' · this page sorted by the chosen column'}
              </span>
              <label className="field inline">
                <span>Per page</span>
                <select value={view.pageSize} onChange={(e) => setView({ ...view, pageSize: Number(e.target.value), page: 1 })}>
                  {[20, 50, 100].map((n) => (
                    <option key={n} value={n}>
                      {n}
                    </option>
                  ))}
                </select>
              </label>
              <button className="button" disabled={view.page <= 1} onClick={() => setView({ ...view, page: view.page - 1 })}>
                Previous
              </button>
              <button className="button" disabled={!pagination.hasMore} onClick={() => setView({ ...view, page: view.page + 1 })}>
                Next
              </button>
            </nav>
          )}
        </>
      )}
    </div>
  );
}
