import type { TestContext, Tenant } from '../support/app.js';

/** Requests of the score tests. */
export const postScores = (ctx: TestContext, tenant: Tenant, payload: unknown) =>
  ctx.app.inject({ method: 'POST', url: '/api/scores', headers: tenant.headers, payload: payload as object });

export const getJson = (ctx: TestContext, tenant: Tenant, url: string) => ctx.app.inject({ method: 'GET', url, headers: tenant.headers });
