import type { Trace } from '../../src/traces/model/schemas.js';

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
