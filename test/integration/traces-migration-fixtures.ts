import type { ClickHouseClient } from '../../src/stores/clickhouse.js';
import type { Trace } from '../../src/traces/model/schemas.js';

/** The engine's plan of a statement for one skip index: the parts and granules it kept, of those it was given; undefined when the plan does not use it. */
export async function skipIndexOf(client: ClickHouseClient, index: string, query: string, values: Record<string, unknown>) {
  const result = await client.query({ query: `EXPLAIN indexes = 1 ${query}`, query_params: values, format: 'JSONEachRow' });
  const plan = (await result.json<{ explain: string }>()).map((row) => row.explain.trim());
  const at = plan.indexOf(`Name: ${index}`);
  if (at < 0) return undefined;
  const counts = (label: string) => {
    const line = plan.slice(at).find((l) => l.startsWith(`${label}:`));
    const [kept, of] = (line ?? '').replace(`${label}:`, '').trim().split('/').map(Number);
    return { kept, of };
  };
  return { parts: counts('Parts'), granules: counts('Granules') };
}

/** The migration tests' traces: one root span of a second, on 2026-03-01 at 10:`minute`, with the trace fields given. */
export const oneSpanTrace = (traceId: string, minute: number, fields: Partial<Pick<Trace, 'sessionId' | 'userId'>> = {}): Trace => ({
  traceId,
  ...fields,
  source: 'sdk',
  spans: [
    {
      spanId: 'root',
      name: 'run',
      kind: 'agent',
      status: 'ok',
      durationMs: 1000,
      startTime: `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`,
      endTime: `2026-03-01T10:${String(minute).padStart(2, '0')}:01.000Z`,
    },
  ],
});

/** The day of `oneSpanTrace`, as a read's window. */
export const migrationWindow = { startAfter: '2026-03-01T00:00:00Z', startBefore: '2026-03-02T00:00:00Z' };
