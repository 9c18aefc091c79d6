import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, Navigate, Outlet, RouterProvider } from 'react-router';
import { ApiError } from './api/client';
import { SessionProvider, SignInPage } from './session';
import { Layout } from './components/Layout';
import { TracesPage } from './pages/traces/Traces';
import { TracePage } from './pages/traces/Trace';
import { PromptsPage } from './pages/prompts/Prompts';
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
          { path: '/sessions', lazy: async () => ({ Component: (await import('./pages/traces/Sessions')).SessionsPage }) },
          { path: '/sessions/:sessionId', lazy: async () => ({ Component: (await import('./pages/traces/Sessions')).SessionPage }) },
          { path: '/users', lazy: async () => ({ Component: (await import('./pages/traces/Users')).UsersPage }) },
          { path: '/users/:userId', lazy: async () => ({ Component: (await import('./pages/traces/Users')).UserPage }) },
          { path: '/dashboard', lazy: async () => ({ Component: (await import('./pages/dashboard/Dashboard')).DashboardPage }) },
          { path: '/prompts', element: <PromptsPage /> },
          { path: '/prompts/:name', lazy: async () => ({ Component: (await import('./pages/prompts/Prompt')).PromptPage }) },
          { path: '/datasets', lazy: async () => ({ Component: (await import('./pages/datasets/Datasets')).DatasetsPage }) },
          { path: '/datasets/:datasetId', lazy: async () => ({ Component: (await import('./pages/datasets/Dataset')).DatasetPage }) },
          { path: '/datasets/:datasetId/runs/:runId', lazy: async () => ({ Component: (await import('./pages/datasets/Run')).RunPage }) },
          {
            path: '/datasets/:datasetId/compare',
            lazy: async () => ({ Component: (await import('./pages/datasets/RunCompare')).RunComparePage }),
          },
          {
            path: '/settings/scores',
            lazy: async () => ({ Component: (await import('./pages/quality/ScoreSettings')).ScoreSettingsPage }),
          },
          { path: '/evaluators', lazy: async () => ({ Component: (await import('./pages/quality/Evaluators')).EvaluatorsPage }) },
          { path: '/evaluators/:id', lazy: async () => ({ Component: (await import('./pages/quality/Evaluators')).EvaluatorPage }) },
          { path: '/monitors', lazy: async () => ({ Component: (await import('./pages/operations/Monitors')).MonitorsPage }) },
          { path: '/monitors/:id', lazy: async () => ({ Component: (await import('./pages/operations/Monitors')).MonitorPage }) },
          {
            path: '/settings/connections',
            lazy: async () => ({ Component: (await import('./pages/quality/ModelConnections')).ModelConnectionsPage }),
          },
          { path: '/settings/usage', lazy: async () => ({ Component: (await import('./pages/operations/Usage')).UsagePage }) },
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
