import { describe, expect, it } from 'vitest';
import { reloadRetentionDays, retainedTables, retentionMutations } from '../../src/retention/engine-retention.js';

describe('retention statements', () => {
  it('on one node, mutate the tables by their names', () => {
    const tables = retentionMutations({}, { workspaceId: 'w', wait: true });
    expect(tables.map((t) => t.table)).toEqual(retainedTables.map((t) => t.table));
    for (const { table, statements } of tables) {
      expect(statements).toHaveLength(2);
      expect(statements[0]).toMatch(new RegExp(`^ALTER TABLE ${table} UPDATE expires_at = `));
      expect(statements[0]).toContain('WHERE workspace_id = {workspaceId:String} SETTINGS mutations_sync = 2');
      expect(statements[1]).toBe(`ALTER TABLE ${table} MATERIALIZE TTL SETTINGS mutations_sync = 2`);
      for (const statement of statements) expect(statement).not.toContain('ON CLUSTER');
    }
    expect(reloadRetentionDays({})).toBe('SYSTEM RELOAD DICTIONARY retention_days');
  });

  it('on a cluster, mutate the replicated _local tables ON CLUSTER, never the Distributed ones', () => {
    const tables = retentionMutations({ cluster: 'main' }, { wait: false });
    for (const { table, statements } of tables) {
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(new RegExp(`^ALTER TABLE ${table}_local ON CLUSTER main UPDATE expires_at = `));
      expect(statements[0]).toContain('WHERE 1 = 1 SETTINGS mutations_sync = 0');
    }
    const waited = retentionMutations({ cluster: 'main' }, { wait: true }).flatMap((t) => t.statements);
    expect(waited.filter((s) => s.includes('MATERIALIZE TTL'))).toEqual(
      retainedTables.map((t) => `ALTER TABLE ${t.table}_local ON CLUSTER main MATERIALIZE TTL SETTINGS mutations_sync = 2`),
    );
    expect(reloadRetentionDays({ cluster: 'main' })).toBe('SYSTEM RELOAD DICTIONARY retention_days ON CLUSTER main');
  });
});
