import type { ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import { ErrorState, Loading } from './states';

/** A list query's three other states (loading, failed with a retry, empty), else its items drawn by `children`. */
export function Loaded<T>({
  query,
  loading,
  empty,
  children,
}: {
  query: UseQueryResult<T[]>;
  loading: string;
  empty: ReactNode;
  children: (items: T[]) => ReactNode;
}) {
  if (query.isPending) return <Loading label={loading} />;
  if (query.isError) return <ErrorState error={query.error} retry={() => query.refetch()} />;
  if (query.data.length === 0) return <p className="muted">{empty}</p>;
  return <>{children(query.data)}</>;
}
