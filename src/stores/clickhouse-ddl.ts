/**
 * Renders one migration statement for a single node or a cluster.
 *
 * Migration files use two placeholders:
 * - `{{on_cluster}}` becomes `ON CLUSTER <name>` on a cluster, nothing on one node;
 * - `ENGINE = {{engine:X(args)}}` becomes `X(args)` on one node; on a cluster the table is
 *   created as `<name>_local` with `ReplicatedX(path, replica, args)` and a `Distributed`
 *   table named `<name>` is put in front, sharded by `{{shard:expr}}` (default `rand()`),
 *   so queries name the same table in both modes.
 * - `{{ttl:expr}}` becomes `TTL expr + INTERVAL n DAY` when retention is set, else nothing.
 * - `{{local:name}}` names the table that holds the rows: `name` on one node, `name_local` on
 *   a cluster. ALTERs (indexes, settings, mutations) must target it.
 * - `{{distributed:name}}` names the Distributed table in front, so a column change reaches
 *   both tables; on one node there is none and the statement is left out.
 *
 * Everything else is the file's own text: a released migration never changes, so it never
 * takes SQL from live code (a `{{sql:…}}` placeholder is refused); a backfill spells out the
 * expression of its release.
 *
 * Statements without an engine (views, ALTERs, INSERT … SELECT) keep their text; views and
 * INSERTs name the Distributed table on a cluster, which reads and routes across shards.
 */
export interface DdlOptions {
  cluster?: string | undefined;
  database: string;
  retentionDays?: number | undefined;
  /** Only for statements whose table name cannot be read from the text. */
  table?: string;
}

export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter((s) => s.length > 0);
}

const enginePattern = /\{\{engine:([A-Za-z]+)\((.*?)\)\}\}/s;
const shardPattern = /\{\{shard:(.*?)\}\}/s;
const ttlPattern = /\{\{ttl:(.*?)\}\}/s;
const localPattern = /\{\{local:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const distributedPattern = /\{\{distributed:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const sqlPattern = /\{\{sql:([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const createTablePattern = /CREATE TABLE IF NOT EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)/;

export function renderClickhouseMigration(statement: string, options: DdlOptions): string[] {
  const onCluster = options.cluster ? `ON CLUSTER ${options.cluster}` : '';
  if (!options.cluster && statement.includes('{{distributed:')) return [];
  let text = statement
    .replaceAll('{{on_cluster}}', onCluster)
    .replace(localPattern, (_match, table: string) => (options.cluster ? `${table}_local` : table))
    .replace(distributedPattern, (_match, table: string) => table)
    .replace(sqlPattern, (_match, name: string) => {
      throw new Error(`migrations are frozen text: inline the SQL of {{sql:${name}}} in the migration file`);
    });
  const ttl = ttlPattern.exec(text);
  if (ttl) {
    text = text.replace(ttlPattern, options.retentionDays ? `TTL ${ttl[1]} + INTERVAL ${Math.trunc(options.retentionDays)} DAY` : '');
  }
  const shard = shardPattern.exec(text);
  const shardKey = shard?.[1]?.trim() || 'rand()';
  text = text.replace(shardPattern, '');
  const engine = enginePattern.exec(text);
  if (!engine) return [text.trim()];
  const [, name, args] = engine as unknown as [string, string, string];
  if (!options.cluster) return [text.replace(enginePattern, `${name}(${args})`).trim()];

  const table = createTablePattern.exec(text)?.[1] ?? options.table;
  if (!table) throw new Error(`cannot find the table name in: ${statement.slice(0, 80)}`);
  const local = `${table}_local`;
  const replicatedArgs = [`'/clickhouse/tables/{shard}/${options.database}/${local}'`, `'{replica}'`, args.trim()]
    .filter((a) => a.length > 0)
    .join(', ');
  const localStatement = text
    .replace(createTablePattern, `CREATE TABLE IF NOT EXISTS ${local}`)
    .replace(enginePattern, `Replicated${name}(${replicatedArgs})`)
    .trim();
  const distributed =
    `CREATE TABLE IF NOT EXISTS ${table} ${onCluster} AS ${local} ` +
    `ENGINE = Distributed(${options.cluster}, ${options.database}, ${local}, ${shardKey})`;
  return [localStatement, distributed];
}
