import type { TestContext, Tenant } from '../support/app.js';

/** Builders for trace payloads shared by the trace integration tests. */
let counter = 0;
export const uniqueId = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

export function span(overrides: Record<string, unknown> = {}) {
  return {
    spanId: uniqueId('s'),
    name: 'step',
    kind: 'tool',
    startTime: '2025-01-01T10:00:00.000Z',
    endTime: '2025-01-01T10:00:01.000Z',
    durationMs: 1000,
    status: 'ok',
    ...overrides,
  };
}

export function trace(overrides: Record<string, unknown> = {}) {
  return { traceId: uniqueId('t'), source: 'sdk', spans: [span()], ...overrides };
}

export async function post(ctx: TestContext, tenant: Tenant, traces: unknown[], url = '/api/traces') {
  return ctx.app.inject({ method: 'POST', url, headers: tenant.headers, payload: { traces } });
}

export async function get(ctx: TestContext, tenant: Tenant, url: string) {
  return ctx.app.inject({ method: 'GET', url, headers: tenant.headers });
}
