import type { TestContext, Tenant } from '../support/app.js';

/** Requests of the dataset tests. */
export const send = (ctx: TestContext, tenant: Tenant, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  ctx.app.inject({ method, url, headers: tenant.headers, ...(payload === undefined ? {} : { payload: payload as object }) });

export async function createDataset(ctx: TestContext, tenant: Tenant, body: Record<string, unknown>): Promise<string> {
  const res = await send(ctx, tenant, 'POST', '/api/datasets', body);
  if (res.statusCode !== 201) throw new Error(`dataset not created: ${res.body}`);
  return res.json().data.id as string;
}
