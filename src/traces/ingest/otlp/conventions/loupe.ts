import type { FieldRow, KindRow } from './table.js';

/** Loupe's own extension: the only way to say graph, edge, workflow or middleware, and a known cost. */
export const loupe = {
  kinds: [{ key: 'loupe.span.kind', value: '*', kind: 'custom', consumed: true }] satisfies KindRow[],
  fields: [{ field: 'costUsd', key: 'loupe.cost_usd' }] satisfies FieldRow[],
};
