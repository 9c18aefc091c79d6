import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { Tenant, TestContext } from '../support/app.js';
import { fixtureTraces, sendTraces } from './analytics-fixtures.js';

/**
 * The analytics data set (analytics-fixtures.ts), with span attributes and metadata on T1 and
 * T2, stored for `tenant`; `other` holds the same trace ids with every cost at 987654 and a
 * marker attribute, so any of its rows in an answer shows.
 */
export async function loadSqlFixtures(ctx: TestContext, tenant: Tenant, other: Tenant) {
  const { t1, t2, t3, t4, t5 } = fixtureTraces();
  const llm1 = t1.spans[1] as Record<string, unknown>;
  llm1.attributes = { 'gen_ai.request.model': 'gpt-4o', 'user.id': 'u-1', 'gen_ai.request.temperature': 0.2, nested: { a: [1, 'x'] } };
  llm1.metadata = { team: 'support' };
  Object.assign(t1, { userId: 'u-1', tags: ['beta', 'support'], service: 'chat-api' });
  Object.assign(t2, { userId: 'u-2' });
  const llm2 = t2.spans[1] as Record<string, unknown>;
  llm2.attributes = { 'gen_ai.request.model': 'claude', 'user.id': 'u-2' };
  const tool2 = t2.spans[2] as Record<string, unknown>;
  tool2.statusMessage = 'lookup timed out';
  await sendTraces(ctx.app, tenant.headers, [t1, t2, t3, t4, t5]);
  await sendTraces(ctx.app, tenant.headers, [t1]);
  const deleted = await ctx.app.inject({ method: 'DELETE', url: `/api/traces/${t5.traceId}`, headers: tenant.headers });
  expect(deleted.statusCode).toBe(200);
  const big = fixtureTraces();
  for (const trace of Object.values(big)) {
    for (const s of trace.spans as Array<Record<string, unknown>>) {
      if ('costUsd' in s) s.costUsd = 987654;
      s.attributes = { 'user.id': 'intruder', secret: 'other-workspace' };
    }
  }
  await sendTraces(ctx.app, other.headers, Object.values(big));
}

export async function sql(app: FastifyInstance, who: Tenant, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: '/api/sql', headers: who.headers, payload: body });
}

/** Runs a query that must succeed and answers its rows as objects by column name. */
export async function sqlRows(app: FastifyInstance, who: Tenant, query: string, parameters?: Record<string, unknown>) {
  const res = await sql(app, who, { query, ...(parameters ? { parameters } : {}) });
  expect(res.statusCode, `${query}\n${res.body}`).toBe(200);
  const { columns, rows } = res.json().data as { columns: Array<{ name: string }>; rows: unknown[][] };
  return rows.map((row) => Object.fromEntries(columns.map((c, i) => [c.name, row[i]])));
}

/** Apps over a test context's stores, each with some settings of its own; closed together. */
export function appsWithSettings(ctx: () => TestContext) {
  const apps: FastifyInstance[] = [];
  return {
    /** The same stores behind an app whose configuration sets some limits. */
    async with(settings: Partial<Config>) {
      const app = await buildApp({ config: { ...ctx().config, ...settings }, sql: ctx().sql, clickhouse: ctx().clickhouse });
      apps.push(app);
      return app;
    },
    async close() {
      for (const app of apps.splice(0)) await app.close();
    },
  };
}
