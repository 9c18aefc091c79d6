import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { WriteBatcher } from '../../src/traces/writer/write-batcher.js';
import * as tenancy from '../../src/tenancy/service/tenants.js';
import { createRateLimiter } from '../../src/tenancy/service/rate-limit.js';
import { openTestStores, type TestStores } from '../support/stores.js';

export interface ListeningService {
  baseUrl: string;
  apiKey: string;
  app: FastifyInstance;
  stores: TestStores;
  /** The service's trace writer (what a worker beside it writes judge traces with). */
  writer: WriteBatcher;
  /** GET or POST through HTTP with the tenant's key; answers status and parsed body. */
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Stops listening (the stores stay open): for "the service is down". */
  stopListening(): Promise<void>;
  close(): Promise<void>;
}

export interface ListeningServiceOptions {
  /**
   * Per-organization rate limits as a started server counts them (off by default, so other
   * tests never hit them); `now` is their clock.
   */
  rateLimits?: { now?: () => number };
  /** Configuration variables of the service (as the environment would give them). */
  env?: Record<string, string>;
}

/** The real service on a loopback port, over fresh stores, with one workspace and its key. */
export async function startListeningService(options: ListeningServiceOptions = {}): Promise<ListeningService> {
  const stores = await openTestStores(options.env);
  const admit = options.rateLimits ? createRateLimiter(stores.sql, { now: options.rateLimits.now }).admit : undefined;
  const writer = new WriteBatcher(stores.clickhouse);
  const app = await buildApp({ config: stores.config, sql: stores.sql, clickhouse: stores.clickhouse, writer, ...(admit && { admit }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const organization = await tenancy.createOrganization(stores.sql, {
    name: `sdk-${randomBytes(4).toString('hex')}`,
    plan: 'enterprise',
    rateLimitPerMinute: 100_000,
    rateLimitPerDay: 1_000_000,
  });
  const workspace = await tenancy.createWorkspace(stores.sql, organization.id, 'main');
  const { key } = await tenancy.createApiKey(stores.sql, {
    scope: 'workspace',
    organizationId: organization.id,
    workspaceId: workspace.id,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  let listening = true;
  return {
    baseUrl,
    apiKey: key,
    app,
    stores,
    writer,
    async call(method, path, body) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: await res.json() };
    },
    async stopListening() {
      if (listening) await app.close();
      listening = false;
    },
    async close() {
      if (listening) await app.close();
      listening = false;
      await writer.close();
      await stores.close();
    },
  };
}
