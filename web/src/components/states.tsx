import type { ReactNode } from 'react';
import { ApiError } from '../api/client';
import { useSession } from '../session';

/** What went wrong, in the API's words, with the request id to quote when asking for help. */
export function ErrorState({ error, retry }: { error: unknown; retry?: () => Promise<unknown> }) {
  const { signOut } = useSession();
  const e =
    error instanceof ApiError ? error : new ApiError(0, 'CLIENT_ERROR', error instanceof Error ? error.message : String(error), undefined);
  let title = 'Something went wrong';
  let hint: ReactNode = null;
  if (e.status === 401) {
    title = 'Your key is no longer accepted';
    hint = (
      <>
        <p>The API key was revoked, mistyped or belongs to another service. Sign in again with a valid key.</p>
        <button className="button primary" onClick={signOut}>
          Sign in again
        </button>
      </>
    );
  } else if (e.status === 403) {
    title = 'Not allowed';
    hint = (
      <p>This key cannot reach this workspace or action. Ask an administrator for a key of the right scope, or sign in with another one.</p>
    );
  } else if (e.status === 429) {
    title = 'Too many requests';
    hint = <p>The organization's rate limit was reached.{e.retryAfter ? ` Try again in ${e.retryAfter} s.` : ' Try again shortly.'}</p>;
  } else if (e.status === 404) {
    title = 'Not found';
  } else if (e.status === 0) {
    title = 'The service does not answer';
  }
  return (
    <section className={`state state-error status-${e.status}`} role="alert" aria-live="polite">
      <div className="state-code">{e.status ? `${e.status} · ${e.code}` : e.code}</div>
      <h2>{title}</h2>
      <p className="state-message">{e.message}</p>
      {hint}
      {e.requestId && (
        <p className="muted small">
          Request id <code>{e.requestId}</code>
        </p>
      )}
      {retry && e.status !== 401 && (
        // The query shows the outcome of a retry; its promise is not needed here.
        <button className="button" onClick={() => void retry()}>
          Try again
        </button>
      )}
    </section>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> {label}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <section className="state state-empty">
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/** The first-trace guide: the two ways of sending one, with this service's address. */
export function FirstTraceGuide() {
  const origin = window.location.origin;
  const curl = `curl -s ${origin}/api/traces -H "x-api-key: $LOUPE_API_KEY" \\
  -H 'content-type: application/json' -d '{"traces":[{
  "traceId":"t-1","name":"support chat","source":"sdk",
  "spans":[{"spanId":"root","name":"agent","kind":"agent",
    "startTime":"2025-06-01T12:00:00Z","endTime":"2025-06-01T12:00:02Z",
    "durationMs":2000,"status":"ok"}]}]}'`;
  const sdk = `import { Loupe } from '@loupe/sdk';

const loupe = new Loupe({ apiKey: process.env.LOUPE_API_KEY, baseUrl: '${origin}' });
const answer = loupe.wrap(async (question: string) =>
  loupe.withSpan('chat', { kind: 'llm.chat' }, async (span) => {
    span.setMetrics({ model: 'gpt-4o', provider: 'openai', inputTokens: 812, outputTokens: 64 });
    return 'It is covered.';
  }), { name: 'support-agent', kind: 'agent' });
await answer('Is my kettle under warranty?');
await loupe.shutdown();`;
  return (
    <EmptyState title="No traces yet">
      <p>Send a first trace to this workspace and it appears here. With curl:</p>
      <pre className="code-block" tabIndex={0} aria-label="curl example">
        {curl}
      </pre>
      <p>Or from a Node.js app with the reference client:</p>
      <pre className="code-block" tabIndex={0} aria-label="SDK example">
        {sdk}
      </pre>
      <p className="muted small">
        OpenTelemetry exporters work too: point them at <code>{origin}/api/traces/otlp/v1/traces</code>.
      </p>
    </EmptyState>
  );
}
