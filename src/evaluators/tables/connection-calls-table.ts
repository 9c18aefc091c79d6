import type { Sql } from '../../stores/postgres.js';

/** The SQL on `model_connection_calls` (postgres/0018): a token bucket of calls per connection. */

const MINUTE_MS = 60_000;

/**
 * Takes one call from the connection's bucket (capacity `perMinute`, refilled at `perMinute` a
 * minute by the clock `nowMs`), in one statement every instance serializes on: 0 when taken,
 * else the milliseconds until a whole call is back in it.
 */
export async function takeConnectionCall(sql: Sql, connectionId: string, perMinute: number, nowMs: number): Promise<number> {
  const taken = await sql`
    insert into model_connection_calls as c (connection_id, tokens, updated_ms)
    values (${connectionId}, ${perMinute - 1}, ${nowMs})
    on conflict (connection_id) do update
      set tokens = least(${perMinute}::float8, c.tokens + greatest(0, ${nowMs}::bigint - c.updated_ms) * ${perMinute}::float8 / ${MINUTE_MS}) - 1,
        updated_ms = greatest(c.updated_ms, ${nowMs}::bigint)
      where least(${perMinute}::float8, c.tokens + greatest(0, ${nowMs}::bigint - c.updated_ms) * ${perMinute}::float8 / ${MINUTE_MS}) >= 1
    returning tokens`;
  if (taken.length > 0) return 0;
  const [bucket] = await sql<{ level: number }[]>`
    select least(${perMinute}::float8, tokens + greatest(0, ${nowMs}::bigint - updated_ms) * ${perMinute}::float8 / ${MINUTE_MS}) as level
    from model_connection_calls where connection_id = ${connectionId}`;
  const level = bucket?.level ?? 0;
  return Math.max(1, Math.ceil(((1 - level) * MINUTE_MS) / perMinute));
}
