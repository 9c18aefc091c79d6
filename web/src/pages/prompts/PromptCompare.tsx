import { useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import type { Prompt, ScoreComparison } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { Clipped } from '../../components/Clipped';
import { formatDuration } from '../../lib/timeline';
import { formatDecimal as num, formatInt, formatPercent, formatPValue, formatSigned, formatUsd } from '../../lib/format';

const testNames: Record<NonNullable<ScoreComparison['test']>, string> = {
  welch_t: "Welch's t",
  two_proportions_z: 'two proportions z',
  chi_square: 'chi-square',
};

function Side({ group }: { group: ScoreComparison['subject'] }) {
  return (
    <>
      <td className="num">{formatInt(group.n)}</td>
      <td className="num">{num(group.mean)}</td>
      <td className="num nowrap">{group.ci95 ? `${num(group.ci95.low)} – ${num(group.ci95.high)}` : '—'}</td>
    </>
  );
}

/**
 * One version against another by what their calls did: calls, cost per call, latency, error
 * rate, and per score name each side's n, mean and 95% interval with the test of the difference
 * and its verdict on the subject (`to`) against the baseline (`from`).
 */
export default function PromptCompare({ subject, baseline }: { subject: Prompt; baseline: Prompt }) {
  const comparison = useQuery({
    queryKey: ['prompts', 'compare', subject.id, baseline.id],
    queryFn: () =>
      call(api.GET('/api/prompt/{id}/compare', { params: { path: { id: String(subject.id) }, query: { against: String(baseline.id) } } })),
    select: (body) => body.data,
  });
  if (comparison.isPending) return <Loading label="Comparing versions…" />;
  if (comparison.isError) return <ErrorState error={comparison.error} retry={() => comparison.refetch()} />;
  const c = comparison.data;
  const versions = [
    { label: `v${c.baseline.version} (baseline)`, figures: c.baseline },
    { label: `v${c.subject.version}`, figures: c.subject },
  ];
  return (
    <div className="compare">
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Calls by version, scrollable">
        <table className="table compact" aria-label="Calls by version">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col" className="num">
                Calls
              </th>
              <th scope="col" className="num">
                Cost per call
              </th>
              <th scope="col" className="num">
                Latency p50
              </th>
              <th scope="col" className="num">
                Latency p95
              </th>
              <th scope="col" className="num">
                Error rate
              </th>
            </tr>
          </thead>
          <tbody>
            {versions.map(({ label, figures }) => (
              <tr key={label} data-version={figures.version}>
                <th scope="row">
                  <Clipped text={label} inCell />
                </th>
                <td className="num">{formatInt(figures.calls)}</td>
                <td className="num">{formatUsd(figures.costPerCall)}</td>
                <td className="num">{formatDuration(figures.latencyMs.p50)}</td>
                <td className="num">{formatDuration(figures.latencyMs.p95)}</td>
                <td className="num">{formatPercent(figures.errorRate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Scores</h3>
      {c.scores.length === 0 ? (
        <p className="muted">No scores on either version&apos;s calls in this window.</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Scores by version, scrollable">
          <table className="table compact" aria-label="Scores by version">
            <thead>
              <tr>
                <th scope="col" rowSpan={2}>
                  Score
                </th>
                <th scope="colgroup" colSpan={3}>
                  v{c.baseline.version} (baseline)
                </th>
                <th scope="colgroup" colSpan={3}>
                  v{c.subject.version}
                </th>
                <th scope="col" rowSpan={2} className="num">
                  Difference
                </th>
                <th scope="col" rowSpan={2}>
                  Test
                </th>
                <th scope="col" rowSpan={2} className="num">
                  p-value
                </th>
                <th scope="col" rowSpan={2}>
                  Verdict
                </th>
              </tr>
              <tr>
                {[0, 1].flatMap((side) =>
                  ['n', 'mean', '95% interval'].map((h) => (
                    <th scope="col" className="num" key={`${side}-${h}`}>
                      {h}
                    </th>
                  )),
                )}
              </tr>
            </thead>
            <tbody>
              {c.scores.map((s) => (
                <tr key={s.name} data-score={s.name}>
                  <th scope="row">
                    <Clipped text={s.name} inCell />
                    <div className="muted small">
                      {s.dataType}
                      {s.higherIsBetter ? '' : ' · lower is better'}
                    </div>
                  </th>
                  <Side group={s.baseline} />
                  <Side group={s.subject} />
                  <td className="num">{formatSigned(s.difference)}</td>
                  <td className="small">
                    {s.test ? testNames[s.test] : '—'}
                    {s.statistic !== null && (
                      <div className="muted">{`stat ${num(s.statistic)}${s.df !== null ? `, df ${num(s.df, 1)}` : ''}`}</div>
                    )}
                  </td>
                  <td className="num">{formatPValue(s.pValue)}</td>
                  <td data-testid="verdict" className={`verdict-${s.verdict.replace(/ /g, '-')}`}>
                    {s.verdict}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="muted small">
        Verdicts are on v{c.subject.version} against v{c.baseline.version}: better or worse when p &lt; 0.05 in the score&apos;s direction,
        else no significant difference.
      </p>
    </div>
  );
}
