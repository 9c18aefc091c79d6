import { useState } from 'react';
import { useMutation, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { Score, ScoreConfig } from '../../api/types';
import { ErrorState } from '../../components/states';
import { Clipped } from '../../components/Clipped';

/** A score's value as people read it: the label of a categorical or boolean, else the number. */
export function scoreText(score: Pick<Score, 'dataType' | 'value' | 'stringValue'>): string {
  if (score.dataType !== 'numeric' && score.stringValue) return score.stringValue;
  return Number.isInteger(score.value) ? String(score.value) : score.value.toFixed(3);
}

/** The workspace's live score configs: what annotation controls and the settings page show. */
export function useScoreConfigs(includeArchived = false): UseQueryResult<ScoreConfig[]> {
  return useQuery({
    queryKey: ['score-configs', includeArchived],
    queryFn: () => call(api.GET('/api/score-configs/', { params: { query: includeArchived ? { includeArchived: 'true' } : {} } })),
    select: (body) => body.data,
  });
}

/** Who this credential is as an author of scores: its own annotations may be edited and deleted. */
function useAuthorId(): string | undefined {
  return useQuery({
    queryKey: ['me'],
    queryFn: () => call(api.GET('/api/me')),
    select: (body): string => body.data.authorId,
    staleTime: Infinity,
  }).data;
}

interface Target {
  traceId: string;
  spanId?: string;
}

/**
 * The scores of a trace or a span: name, value or label, source, comment and author; the
 * caller's own annotations carry a delete button.
 */
export function ScoreList({ scores, label, traceId }: { scores: Score[] | undefined; label: string; traceId: string }) {
  const me = useAuthorId();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/api/scores/{id}', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['trace', traceId] }),
  });
  if (!scores || scores.length === 0) return <p className="muted small">No scores yet.</p>;
  return (
    <>
      <ul className="scores" aria-label={label}>
        {scores.map((s) => {
          const own = s.source === 'annotation' && me !== undefined && s.authorId === me;
          return (
            <li key={s.id} className="score" data-score-name={s.name}>
              <span className="score-name">
                <Clipped text={s.name} />
              </span>
              <strong className="score-value" data-testid="score-value">
                {scoreText(s)}
              </strong>
              <span className="badge">{s.source}</span>
              <span className="muted small">{own ? 'by you' : s.authorId ? <Clipped text={`by ${s.authorId}`} /> : ''}</span>
              {s.comment && (
                <span className="score-comment small">
                  <Clipped text={s.comment} />
                </span>
              )}
              {own && (
                <button
                  className="button small danger"
                  onClick={() => remove.mutate(s.id)}
                  disabled={remove.isPending}
                  aria-label={`Delete score ${s.name}`}
                >
                  Delete
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {remove.isError && <ErrorState error={remove.error} />}
    </>
  );
}

/**
 * Annotation controls for a trace or a span, from the workspace's score configs: buttons for
 * boolean and categorical, a number input for numeric, one comment. Giving a score again
 * re-sends the id of your own annotation of that name (a correction, never a second score).
 */
export function Annotate({ target, scores, label }: { target: Target; scores: Score[] | undefined; label: string }) {
  const configs = useScoreConfigs();
  const me = useAuthorId();
  const queryClient = useQueryClient();
  const [comment, setComment] = useState('');
  const [numbers, setNumbers] = useState<Record<string, string>>({});
  const mine = (name: string) =>
    (scores ?? []).find((s) => s.name === name && s.source === 'annotation' && me !== undefined && s.authorId === me);
  const save = useMutation({
    mutationFn: async ({ config, value }: { config: ScoreConfig; value: number | string | boolean }) => {
      const existing = mine(config.name);
      const body = {
        ...(existing ? { id: existing.id } : {}),
        name: config.name,
        dataType: config.dataType,
        value,
        source: 'annotation' as const,
        traceId: target.traceId,
        ...(target.spanId ? { spanId: target.spanId } : {}),
        ...(comment.trim() ? { comment: comment.trim() } : existing?.comment ? { comment: existing.comment } : {}),
      };
      const result = await call(api.POST('/api/scores/', { body }));
      const error = result.data.errors[0];
      if (error) throw new Error(`${error.path}: ${error.message}`);
      return result;
    },
    onSuccess: async () => {
      setComment('');
      await queryClient.invalidateQueries({ queryKey: ['trace', target.traceId] });
    },
  });
  if (configs.isPending) return null;
  if (configs.isError) return <ErrorState error={configs.error} retry={() => configs.refetch()} />;
  if (configs.data.length === 0)
    return <p className="muted small">No score configs yet: add some in Settings → Scores to annotate here.</p>;
  return (
    <section className="annotate" aria-label={label}>
      {configs.data.map((config) => {
        const current = mine(config.name);
        const choice = (text: string, value: string | boolean) => {
          const chosen = current !== undefined && current.stringValue === text;
          return (
            <button
              key={text}
              type="button"
              className={`button small${chosen ? ' active' : ''}`}
              aria-pressed={chosen}
              disabled={save.isPending}
              onClick={() => save.mutate({ config, value })}
            >
              {text}
            </button>
          );
        };
        return (
          <div className="annotate-row" key={config.id} role="group" aria-label={`Annotate ${config.name}`}>
            <span className="score-name" title={config.description ?? undefined}>
              <Clipped text={config.name} />
            </span>
            {config.dataType === 'boolean' && [choice('true', true), choice('false', false)]}
            {config.dataType === 'categorical' && (config.categories ?? []).map((c) => choice(c.label, c.label))}
            {config.dataType === 'numeric' && (
              <form
                className="inline-form"
                onSubmit={(event) => {
                  event.preventDefault();
                  const raw = numbers[config.id] ?? (current ? String(current.value) : '');
                  if (raw.trim() !== '') save.mutate({ config, value: Number(raw) });
                }}
              >
                <input
                  type="number"
                  step="any"
                  aria-label={`Value of ${config.name}`}
                  min={config.min ?? undefined}
                  max={config.max ?? undefined}
                  placeholder={config.min !== null && config.max !== null ? `${config.min}–${config.max}` : 'value'}
                  value={numbers[config.id] ?? (current ? String(current.value) : '')}
                  onChange={(e) => setNumbers((n) => ({ ...n, [config.id]: e.target.value }))}
                />
                <button className="button small" type="submit" disabled={save.isPending}>
                  {current ? 'Update' : 'Save'}
                </button>
              </form>
            )}
          </div>
        );
      })}
      <label className="field">
        <span>Comment (sent with the next score you give)</span>
        <textarea rows={2} maxLength={4000} value={comment} onChange={(e) => setComment(e.target.value)} />
      </label>
      {save.isError && <ErrorState error={save.error} />}
    </section>
  );
}
