import { useQuery } from '@tanstack/react-query';
import { Navigate, NavLink, Outlet, useLocation } from 'react-router';
import { api, call } from '../api/client';
import { LogoMark, useSession } from '../session';

export function Layout() {
  const { credential, signOut } = useSession();
  const location = useLocation();
  const me = useQuery({
    queryKey: ['me'],
    enabled: !!credential,
    staleTime: 60_000,
    queryFn: () => call(api.GET('/api/me')),
    select: (b) => b.data,
  });
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
          <NavLink to="/sessions">Sessions</NavLink>
          <NavLink to="/users">Users</NavLink>
          <NavLink to="/dashboard">Dashboard</NavLink>
          <NavLink to="/prompts">Prompts</NavLink>
          <NavLink to="/datasets">Datasets</NavLink>
          <NavLink to="/evaluators">Evaluators</NavLink>
          <NavLink to="/monitors">Monitors</NavLink>
          <NavLink to="/settings/scores">Scores</NavLink>
          <NavLink to="/settings/connections">Model connections</NavLink>
          <NavLink to="/settings/usage">Usage</NavLink>
        </nav>
        <div className="sidebar-foot">
          <div className="workspace" title={workspace ? `Workspace ${workspace}` : undefined}>
            <span className="muted small">Workspace</span>
            <code className="small">{workspace ? `${workspace.slice(0, 8)}…` : '…'}</code>
            {me.data && (
              <span className="small muted">
                {me.data.plan} plan · {me.data.principal.scope ?? me.data.principal.kind} key
              </span>
            )}
          </div>
          <a className="small" href="/docs" target="_blank" rel="noreferrer">
            API reference
          </a>
          <button className="button small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </aside>
      <main className="content" id="main">
        <Outlet />
      </main>
    </div>
  );
}
