import { createContext, useCallback, useContext, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useLocation, useNavigate } from 'react-router';
import { ApiError, credentialHeaders, readCredential, toApiError, writeCredential, type Credential } from './api/client';
import type { Me } from './api/types';

interface SessionValue {
  credential: Credential | null;
  signIn: (credential: Credential) => void;
  signOut: () => void;
}

const SessionContext = createContext<SessionValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [credential, setCredential] = useState<Credential | null>(() => readCredential());
  const queryClient = useQueryClient();
  const signIn = useCallback(
    (c: Credential) => {
      writeCredential(c);
      queryClient.clear();
      setCredential(c);
    },
    [queryClient],
  );
  const signOut = useCallback(() => {
    writeCredential(null);
    queryClient.clear();
    setCredential(null);
  }, [queryClient]);
  const value = useMemo(() => ({ credential, signIn, signOut }), [credential, signIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

/** Checks a credential with GET /api/me before keeping it. */
async function checkCredential(credential: Credential): Promise<Me> {
  const response = await fetch('/api/me', { headers: credentialHeaders(credential) });
  const body = (await response.json().catch(() => undefined)) as { data: Me } | undefined;
  if (!response.ok) throw toApiError(response, body);
  return body!.data;
}

export function SignInPage() {
  const { signIn } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const [apiKey, setApiKey] = useState('');
  const [workspaceId, setWorkspaceId] = useState('');
  const [organizationId, setOrganizationId] = useState('');
  const [scoped, setScoped] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const credential: Credential = {
      apiKey: apiKey.trim(),
      ...(workspaceId.trim() ? { workspaceId: workspaceId.trim() } : {}),
      ...(organizationId.trim() ? { organizationId: organizationId.trim() } : {}),
    };
    try {
      await checkCredential(credential);
      signIn(credential);
      const from = (location.state as { from?: string } | null)?.from;
      void navigate(from && from !== '/sign-in' ? from : '/traces', { replace: true });
    } catch (e) {
      const apiError = e instanceof ApiError ? e : new ApiError(0, 'NETWORK_ERROR', String(e), undefined);
      // An organization or user key needs the workspace (and organization) it works in.
      if (apiError.status === 400 && /x-(workspace|organization)-id/.test(JSON.stringify(apiError.details ?? apiError.message)))
        setScoped(true);
      setError(apiError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="signin">
      <form className="signin-card" onSubmit={(event) => void submit(event)} aria-labelledby="signin-title">
        <div className="brand brand-large">
          <LogoMark /> <span>Loupe</span>
        </div>
        <h1 id="signin-title">Sign in to the console</h1>
        <p className="muted">
          Paste an API key. It stays in this browser tab only (session storage) and is sent as the <code>x-api-key</code> header.
        </p>
        <label className="field">
          <span>API key</span>
          <input
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            placeholder="lpk_…"
            required
            autoFocus
          />
        </label>
        <button type="button" className="link-button" onClick={() => setScoped((s) => !s)} aria-expanded={scoped}>
          {scoped ? '▾' : '▸'} Organization or user key
        </button>
        {scoped && (
          <div className="scoped-fields">
            <p className="muted small">
              An organization key works in any workspace of its organization; a user key also needs the organization. Both are UUIDs.
            </p>
            <label className="field">
              <span>Workspace id</span>
              <input
                value={workspaceId}
                onChange={(e) => setWorkspaceId(e.target.value)}
                spellCheck={false}
                placeholder="00000000-0000-0000-0000-000000000000"
              />
            </label>
            <label className="field">
              <span>Organization id (user keys)</span>
              <input value={organizationId} onChange={(e) => setOrganizationId(e.target.value)} spellCheck={false} />
            </label>
          </div>
        )}
        {error && (
          <div className="alert alert-error" role="alert">
            <strong>
              {error.status === 401
                ? 'This key is not accepted.'
                : error.status === 403
                  ? 'This key cannot reach that workspace.'
                  : 'Sign-in failed.'}
            </strong>{' '}
            {error.message}
            {error.requestId && <div className="small muted">Request id {error.requestId}</div>}
          </div>
        )}
        <button className="button primary" type="submit" disabled={busy || !apiKey.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <p className="muted small">
          No key yet? The service prints one the first time it starts; <code>npx loupe keys create</code> makes more.
        </p>
      </form>
    </main>
  );
}

export function LogoMark() {
  return (
    <svg width="22" height="22" viewBox="0 0 32 32" aria-hidden="true">
      <circle cx="13" cy="13" r="9" fill="none" stroke="currentColor" strokeWidth="4" />
      <path d="M20 20l8 8" stroke="currentColor" strokeWidth="4" strokeLinecap="round" />
    </svg>
  );
}
