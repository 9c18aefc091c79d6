import { useQuery } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import { EmptyState, ErrorState, Loading } from '../../components/states';
import { formatTime } from '../../lib/format';
import { itemPath } from '../../lib/paths';
import { Clipped, ClippedLink } from '../../components/Clipped';

export function PromptsPage() {
  const prompts = useQuery({
    queryKey: ['prompts', 'latest'],
    queryFn: () => call(api.GET('/api/prompt/', { params: { query: { isLatest: 'true', limit: 200 } } })),
  });
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>Prompts</h1>
          <p className="muted">Each prompt by name, with its latest version.</p>
        </div>
      </header>
      {prompts.isPending ? (
        <Loading label="Loading prompts…" />
      ) : prompts.isError ? (
        <ErrorState error={prompts.error} retry={() => prompts.refetch()} />
      ) : prompts.data.data.length === 0 ? (
        <EmptyState title="No prompts yet">
          <p>Create one through the API; its versions, diffs and a render preview then appear here.</p>
          <pre className="code-block" tabIndex={0}>{`curl -s ${window.location.origin}/api/prompt -H "x-api-key: $LOUPE_API_KEY" \\
  -H 'content-type: application/json' \\
  -d '{"name":"support-agent","systemPrompt":"You help {customer} with {product}."}'`}</pre>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Prompts">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Latest version</th>
                <th scope="col">Description</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {prompts.data.data.map((p) => (
                <tr key={p.id}>
                  <td>
                    <ClippedLink to={itemPath('prompts', p.name)} text={p.name} inCell />
                  </td>
                  <td>
                    <span className="badge version">v{p.version}</span>
                  </td>
                  <td className="muted">{p.description ? <Clipped text={p.description} inCell /> : '—'}</td>
                  <td className="muted">{formatTime(p.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {prompts.data.meta.pagination.total > prompts.data.data.length && (
            <p className="muted small">
              Showing {prompts.data.data.length} of {prompts.data.meta.pagination.total} prompts.
            </p>
          )}
        </div>
      )}
    </div>
  );
}
