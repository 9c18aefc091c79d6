import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, Navigate, Outlet, RouterProvider } from 'react-router';
import { ApiError } from './api/client';
import { SessionProvider, SignInPage } from './session';
import { Layout } from './components/Layout';
import { TracesPage } from './pages/Traces';
import { TracePage } from './pages/Trace';
import { PromptsPage } from './pages/Prompts';
import { ErrorState } from './components/states';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refused credential or a rate limit is not helped by retrying at once.
      retry: (count, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
      staleTime: 10_000,
    },
  },
});

function Root() {
  return (
    <SessionProvider>
      <Outlet />
    </SessionProvider>
  );
}

function RouteError() {
  return <ErrorState error={new Error('This page failed to load. Reload the page to get the current version of the console.')} />;
}

const router = createBrowserRouter([
  {
    element: <Root />,
    errorElement: <RouteError />,
    children: [
      { path: '/sign-in', element: <SignInPage /> },
      {
        element: <Layout />,
        children: [
          { path: '/', element: <Navigate to="/traces" replace /> },
          { path: '/traces', element: <TracesPage /> },
          { path: '/traces/:traceId', element: <TracePage /> },
          { path: '/sessions', lazy: async () => ({ Component: (await import('./pages/Sessions')).SessionsPage }) },
          { path: '/sessions/:sessionId', lazy: async () => ({ Component: (await import('./pages/Sessions')).SessionPage }) },
          { path: '/users', lazy: async () => ({ Component: (await import('./pages/Users')).UsersPage }) },
          { path: '/users/:userId', lazy: async () => ({ Component: (await import('./pages/Users')).UserPage }) },
          { path: '/dashboard', lazy: async () => ({ Component: (await import('./pages/Dashboard')).DashboardPage }) },
          { path: '/prompts', element: <PromptsPage /> },
          { path: '/prompts/:name', lazy: async () => ({ Component: (await import('./pages/Prompt')).PromptPage }) },
          { path: '/datasets', lazy: async () => ({ Component: (await import('./pages/Datasets')).DatasetsPage }) },
          { path: '/datasets/:datasetId', lazy: async () => ({ Component: (await import('./pages/Dataset')).DatasetPage }) },
          { path: '/datasets/:datasetId/runs/:runId', lazy: async () => ({ Component: (await import('./pages/Run')).RunPage }) },
          { path: '/datasets/:datasetId/compare', lazy: async () => ({ Component: (await import('./pages/RunCompare')).RunComparePage }) },
          { path: '/settings/scores', lazy: async () => ({ Component: (await import('./pages/ScoreSettings')).ScoreSettingsPage }) },
          { path: '/evaluators', lazy: async () => ({ Component: (await import('./pages/Evaluators')).EvaluatorsPage }) },
          { path: '/evaluators/:id', lazy: async () => ({ Component: (await import('./pages/Evaluators')).EvaluatorPage }) },
          { path: '/monitors', lazy: async () => ({ Component: (await import('./pages/Monitors')).MonitorsPage }) },
          { path: '/monitors/:id', lazy: async () => ({ Component: (await import('./pages/Monitors')).MonitorPage }) },
          {
            path: '/settings/connections',
            lazy: async () => ({ Component: (await import('./pages/ModelConnections')).ModelConnectionsPage }),
          },
          { path: '/settings/usage', lazy: async () => ({ Component: (await import('./pages/Usage')).UsagePage }) },
          { path: '*', element: <Navigate to="/traces" replace /> },
        ],
      },
    ],
  },
]);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
