import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api, call } from '../../api/client';
import type { Evaluator, EvaluatorJob } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { Clipped, ClippedLink } from '../../components/Clipped';
import { RecordTable } from '../../components/RecordTable';
import { ListPage } from '../../components/ListPage';
import { ItemDetail } from '../../components/ItemDetail';
import { Loaded } from '../../components/Loaded';
import { formatPercent, formatTime } from '../../lib/format';
import { itemPath, pathSegment } from '../../lib/paths';
import { EvaluatorForm } from './EvaluatorForm';

const evaluatorPath = (id: string) => `/evaluators/${pathSegment(id)}`;

function whatItDoes(e: Evaluator): string {
  if (e.judge) {
    const ref = e.judge.prompt.label ? ` @${e.judge.prompt.label}` : e.judge.prompt.version ? ` v${e.judge.prompt.version}` : '';
    return `judge prompt ${e.judge.prompt.name}${ref}`;
  }
  return e.check ? `check ${e.check.type.replace('_', ' ')}` : '';
}

function whichTraces(e: Evaluator): string {
  const f = e.target.filters;
  const parts = [
    f.name && `name ${f.name}`,
    f.tags?.length && `tags ${f.tags.join(', ')}`,
    f.environment && `environment ${f.environment}`,
  ].filter(Boolean);
  return `${parts.length ? parts.join(' · ') : 'every new trace'} · ${formatPercent(e.target.samplingRate, 0)} sampled`;
}

function usePauseResume(evaluator: Evaluator) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      evaluator.status === 'active'
        ? call(api.POST('/api/evaluators/{id}/pause', { params: { path: { id: evaluator.id } } }))
        : call(api.POST('/api/evaluators/{id}/resume', { params: { path: { id: evaluator.id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['evaluators'] }),
  });
}

function PauseResume({ evaluator }: { evaluator: Evaluator }) {
  const toggle = usePauseResume(evaluator);
  const action = evaluator.status === 'active' ? 'Pause' : 'Resume';
  return (
    <>
      <button
        className="button small"
        disabled={toggle.isPending}
        onClick={() => toggle.mutate()}
        aria-label={`${action} ${evaluator.name}`}
      >
        {action}
      </button>
      {toggle.isError && <ErrorState error={toggle.error} />}
    </>
  );
}

const StatusBadge = ({ status }: { status: string }) => (
  <span className={`badge status-${status === 'active' || status === 'succeeded' ? 'ok' : status === 'failed' ? 'error' : 'unset'}`}>
    {status}
  </span>
);

/** Evaluators: LLM judges and built-in checks that score new traces by themselves. */
export function EvaluatorsPage() {
  const navigate = useNavigate();
  const evaluators = useQuery({
    queryKey: ['evaluators'],
    queryFn: () => call(api.GET('/api/evaluators/')),
    select: (b) => b.data,
  });
  return (
    <ListPage
      title="Evaluators"
      intro={
        <>
          Judges and checks that score new traces by themselves. Their models are the{' '}
          <Link to="/settings/connections">model connections</Link>.
        </>
      }
      newLabel="New evaluator"
      form={() => <EvaluatorForm onSaved={(saved) => void navigate(evaluatorPath(saved.id))} />}
    >
      <Loaded query={evaluators} loading="Loading evaluators…" empty={<>No evaluators yet.</>}>
        {(items) => (
          <RecordTable label="Evaluators" columns={['Name', 'Status', 'What', 'Score', 'Traces', 'Version']}>
            {items.map((e) => (
              <tr key={e.id} data-evaluator={e.name}>
                <td>
                  <ClippedLink to={evaluatorPath(e.id)} text={e.name} inCell />
                </td>
                <td>
                  <StatusBadge status={e.status} />
                </td>
                <td>
                  <Clipped text={whatItDoes(e)} inCell />
                </td>
                <td>
                  <Clipped text={`${e.score.name} (${e.score.dataType})`} inCell />
                </td>
                <td className="small">
                  <Clipped text={whichTraces(e)} inCell />
                </td>
                <td className="num">{e.version}</td>
                <td>
                  <PauseResume evaluator={e} />
                </td>
              </tr>
            ))}
          </RecordTable>
        )}
      </Loaded>
    </ListPage>
  );
}

const jobStatuses = ['pending', 'succeeded', 'failed', 'skipped'] as const;

function Jobs({ evaluator }: { evaluator: Evaluator }) {
  const [status, setStatus] = useState<EvaluatorJob['status'] | ''>('');
  const jobs = useQuery({
    queryKey: ['evaluators', evaluator.id, 'jobs', status],
    queryFn: () =>
      call(
        api.GET('/api/evaluators/{id}/jobs', {
          params: { path: { id: evaluator.id }, query: { limit: 100, ...(status ? { status } : {}) } },
        }),
      ),
    select: (b) => b.data,
    refetchInterval: 10_000,
  });
  return (
    <section className="card" aria-labelledby="jobs-title">
      <div className="card-head">
        <h2 id="jobs-title">Jobs</h2>
        <label className="field">
          <span>Status</span>
          <select value={status} onChange={(e) => setStatus(e.target.value as EvaluatorJob['status'] | '')}>
            <option value="">all</option>
            {jobStatuses.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Loaded
        query={jobs}
        loading="Loading jobs…"
        empty={<>No jobs{status ? ` ${status}` : ''} yet: new traces matching the evaluator are judged after its delay.</>}
      >
        {(items) => (
          <RecordTable
            label="Evaluator jobs"
            columns={['Trace', 'Status', 'Attempts', 'Version', 'Error', 'Score', 'Queued', 'Finished']}
            actions={false}
          >
            {items.map((j) => (
              <tr key={j.id} data-job-trace={j.traceId} data-job-status={j.status}>
                <td>
                  <ClippedLink to={itemPath('traces', j.traceId)} text={j.traceId} inCell />
                </td>
                <td>
                  <StatusBadge status={j.status} />
                </td>
                <td className="num">{j.attempts}</td>
                <td className="num">{j.evaluatorVersion}</td>
                <td className="small">{j.error ? <Clipped text={j.error} inCell /> : '—'}</td>
                <td>{j.scoreId ? <Link to={itemPath('traces', j.traceId)}>on the trace</Link> : '—'}</td>
                <td className="muted small">{formatTime(j.createdAt)}</td>
                <td className="muted small">{j.finishedAt ? formatTime(j.finishedAt) : '—'}</td>
              </tr>
            ))}
          </RecordTable>
        )}
      </Loaded>
    </section>
  );
}

/** One evaluator: its definition, edit, pause/resume, and its jobs with their failures. */
export function EvaluatorPage() {
  const { id = '' } = useParams();
  const evaluator = useQuery({
    queryKey: ['evaluators', id],
    queryFn: () => call(api.GET('/api/evaluators/{id}', { params: { path: { id } } })),
    select: (b) => b.data,
  });
  if (evaluator.isPending) return <Loading label="Loading the evaluator…" />;
  if (evaluator.isError) return <ErrorState error={evaluator.error} retry={() => evaluator.refetch()} />;
  const e = evaluator.data;
  return (
    <ItemDetail
      list={{ title: 'Evaluators', path: '/evaluators', queryKey: 'evaluators' }}
      name={e.name}
      badge={<StatusBadge status={e.status} />}
      summary={
        <p className="muted">
          {whatItDoes(e)} → {e.score.name} ({e.score.dataType}) · {whichTraces(e)} · version {e.version}
        </p>
      }
      actions={<PauseResume evaluator={e} />}
      edit={(close) => <EvaluatorForm key={`${e.id}-${e.version}`} evaluator={e} onSaved={close} />}
      remove={() => call(api.DELETE('/api/evaluators/{id}', { params: { path: { id } } }))}
      deleteTitle="Delete this evaluator?"
      deleteText={
        <>
          “<Clipped text={e.name} />” and its jobs are deleted; the scores it gave stay on their traces.
        </>
      }
    >
      <Jobs evaluator={e} />
    </ItemDetail>
  );
}
