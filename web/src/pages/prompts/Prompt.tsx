import { lazy, Suspense, useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, call } from '../../api/client';
import type { Prompt } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { formatTime } from '../../lib/format';
import { sortVersionsDesc } from '../../lib/semver';
import { labelsBesideLatest } from '../../lib/labels';
import { NewVersionForm, RenderPreview } from './PromptForms';
import { useItemParam } from '../../lib/item-param';
import { Clamped, Clipped } from '../../components/Clipped';

const PromptDiff = lazy(() => import('./PromptDiff'));
const PromptCompare = lazy(() => import('./PromptCompare'));

export function PromptPage() {
  const name = useItemParam('prompts');
  const [params, setParams] = useSearchParams();
  const [formOpen, setFormOpen] = useState(false);
  const versions = useQuery({
    queryKey: ['prompts', 'name', name],
    queryFn: () => call(api.GET('/api/prompt/', { params: { query: { name, limit: 200 } } })),
    select: (body) => sortVersionsDesc(body.data),
  });
  const list = useMemo(() => versions.data ?? [], [versions.data]);
  const byVersion = useMemo(() => new Map(list.map((p) => [p.version, p])), [list]);
  const latest = list.find((p) => p.isLatest) ?? list[0];
  const to = byVersion.get(params.get('to') ?? '') ?? list[0];
  const from = byVersion.get(params.get('from') ?? '') ?? list[list.indexOf(to!) + 1];
  const comparing = params.get('view') === 'compare';
  const setComparing = (on: boolean) => {
    const next = new URLSearchParams(params);
    if (on) next.set('view', 'compare');
    else next.delete('view');
    setParams(next, { replace: true });
  };

  const pick = (key: 'from' | 'to', version: string) => {
    const next = new URLSearchParams(params);
    next.set(key, version);
    setParams(next, { replace: true });
  };

  if (versions.isPending) return <Loading label="Loading versions…" />;
  if (versions.isError) return <ErrorState error={versions.error} retry={() => versions.refetch()} />;
  if (!latest || !to) return <ErrorState error={new Error(`No prompt is named “${name}”.`)} />;

  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/prompts">Prompts</Link> <span aria-hidden="true">/</span> <Clipped text={name} />
      </nav>
      <header className="page-head">
        <div>
          <h1>
            <Clamped text={name} />
          </h1>
          <p className="muted">
            {list.length} version{list.length === 1 ? '' : 's'} · latest <span className="badge version">v{latest.version}</span>
          </p>
        </div>
        <button className="button primary" onClick={() => setFormOpen((o) => !o)} aria-expanded={formOpen}>
          {formOpen ? 'Close' : 'New version'}
        </button>
      </header>
      {formOpen && (
        <NewVersionForm
          base={latest}
          onCreated={(created: Prompt) => {
            setFormOpen(false);
            setParams(new URLSearchParams({ from: latest.version, to: created.version }), { replace: true });
          }}
        />
      )}
      <div className="prompt-layout">
        <section className="card versions" aria-label="Versions">
          <h2>Versions</h2>
          <table className="table compact">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Compare</span>A / B
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.id} className={p.version === to.version ? 'selected' : undefined} data-version={p.version}>
                  <td>
                    <span className="badge version">v{p.version}</span> {p.isLatest && <span className="badge latest">latest</span>}
                    {labelsBesideLatest(p.labels).map((l) => (
                      <span key={l} className="badge">
                        {l}
                      </span>
                    ))}
                    <div className="muted small truncate">{p.description || ''}</div>
                  </td>
                  <td className="muted small">{formatTime(p.createdAt)}</td>
                  <td className="nowrap">
                    <input
                      type="radio"
                      name="from"
                      aria-label={`Compare from v${p.version}`}
                      checked={from?.version === p.version}
                      onChange={() => pick('from', p.version)}
                    />
                    <input
                      type="radio"
                      name="to"
                      aria-label={`Compare to v${p.version}`}
                      checked={to.version === p.version}
                      onChange={() => pick('to', p.version)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <div className="prompt-main">
          <div className="button-row" role="group" aria-label="View">
            <button className={`button small${comparing ? '' : ' active'}`} aria-pressed={!comparing} onClick={() => setComparing(false)}>
              Diff
            </button>
            <button
              className={`button small${comparing ? ' active' : ''}`}
              aria-pressed={comparing}
              disabled={!from}
              onClick={() => setComparing(true)}
            >
              Compare versions
            </button>
          </div>
          {comparing && from ? (
            <section className="card" aria-label="Compare versions">
              <h2>
                v{to.version} against v{from.version}
              </h2>
              <Suspense fallback={<Loading label="Loading comparison…" />}>
                <PromptCompare subject={to} baseline={from} />
              </Suspense>
            </section>
          ) : (
            <section className="card" aria-label="Diff">
              <h2>
                {from ? (
                  <>
                    Changes from v{from.version} to v{to.version}
                  </>
                ) : (
                  <>v{to.version} (first version)</>
                )}
              </h2>
              <Suspense fallback={<Loading label="Loading diff…" />}>
                <PromptDiff
                  from={from ?? { ...to, systemPrompt: '', humanPrompt: null, outputSchema: null, metadata: {}, description: '' }}
                  to={to}
                />
              </Suspense>
            </section>
          )}
          <RenderPreview prompt={to} />
        </div>
      </div>
    </div>
  );
}
