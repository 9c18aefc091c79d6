import { useQuery } from '@tanstack/react-query';
import { Navigate, NavLink, Outlet, useLocation } from 'react-router';
import { api, call, getUntyped, ApiError } from '../api/client';
import { LogoMark, useSession } from '../session';

/** Sessions and users need a service that has them: the nav hides them when the API answers 404. */
export function useFeature(path: '/api/sessions' | '/api/users') {
  const { credential } = useSession();
  const probe = useQuery({
    queryKey: ['feature', path],
    enabled: !!credential,
    staleTime: Infinity,
    retry: false,
    queryFn: async () => {
      try {
        await getUntyped(path, { limit: 1 });
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return false;
        return true; // any other answer means the route exists
      }
    },
  });
  return probe.data === true;
}

export function Layout() {
  const { credential, signOut } = useSession();
  const location = useLocation();
  const me = useQuery({ queryKey: ['me'], enabled: !!credential, staleTime: 60_000, queryFn: () => call(api.GET('/api/me')), select: (b) => b.data });
  const sessions = useFeature('/api/sessions');
  const users = useFeature('/api/users');
  if (!credential) return <Navigate to="/sign-in" replace state={{ from: location.pathname + location.search }} />;
  const workspace = me.data?.workspaceId;
  return (
    <div className="shell">
      <aside className="sidebar">
        <div className="brand">
          <LogoMark /> <span>Loupe</span>
        </div>
        <nav aria-label="Main">
          <NavLink to="/traces">Traces</NavLink>
          {sessions && <NavLink to="/sessions">Sessions</NavLink>}
          {users && <NavLink to="/users">Users</NavLink>}
          <NavLink to="/dashboard">Dashboard</NavLink>
          <NavLink to="/prompts">Prompts</NavLink>
        </nav>
        <div className="sidebar-foot">
          <div className="workspace" title={workspace ? `Workspace ${workspace}` : undefined}>
            <span className="muted small">Workspace</span>
            <code className="small">{workspace ? `${workspace.slice(0, 8)}…` : '…'}</code>
            {me.data && <span className="small muted">{me.data.plan} plan · {me.data.principal.scope ?? me.data.principal.kind} key</span>}
          </div>
          <a className="small" href="/docs" target="_blank" rel="noreferrer">API reference</a>
          <button className="button small" onClick={signOut}>Sign out</button>
        </div>
      </aside>
      <main className="content" id="main">
        <Outlet />
      </main>
    </div>
  );
}
