import type { ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import { ErrorState, Loading } from './states';

/**
 * A list query's three other states (loading, failed with a retry, empty), else its items drawn
 * by `children`. Empty, it shows `empty` as a muted line, or `emptyState` as it is (a block
 * that tells how to make the first one).
 */
export function Loaded<T>({
  query,
  loading,
  empty,
  emptyState,
  children,
}: {
  query: UseQueryResult<T[]>;
  loading: string;
  children: (items: T[]) => ReactNode;
} & ({ empty: ReactNode; emptyState?: never } | { emptyState: ReactNode; empty?: never })) {
  if (query.isPending) return <Loading label={loading} />;
  if (query.isError) return <ErrorState error={query.error} retry={() => query.refetch()} />;
  if (query.data.length === 0) return emptyState ?? <p className="muted">{empty}</p>;
  return <>{children(query.data)}</>;
}
