import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/process.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-start-'));
const apiKey = 'lpk_e2e_bootstrap_key_0123456789abcdef';
const adminToken = 'e2e-admin-token-0123456789';
const env = { LOUPE_DATA_DIR: dataDir, LOUPE_BOOTSTRAP_API_KEY: apiKey, LOUPE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'info' };
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${service!.baseUrl}${url}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

describe('npm start on a fresh data directory', () => {
  it('serves /healthz and an authenticated route, stops on SIGTERM, and keeps its data across a restart', async () => {
    service = await startService(env);
    expect(service.output()).toMatch(/migrations applied/);

    const me = await call('GET', '/api/me', { 'x-api-key': apiKey });
    expect(me.status).toBe(200);
    expect(me.body.data.plan).toBe('pro');

    const org = await call('POST', '/api/admin/organizations', { 'x-admin-token': adminToken }, { name: 'kept', plan: 'free' });
    expect(org.status).toBe(201);

    const now = Date.now();
    const trace = {
      traceId: 'restart-trace-1',
      name: 'kept across restarts',
      source: 'sdk',
      spans: [
        {
          spanId: 'root',
          name: 'agent',
          kind: 'agent',
          startTime: new Date(now - 1000).toISOString(),
          endTime: new Date(now).toISOString(),
          durationMs: 1000,
          status: 'ok',
        },
      ],
    };
    const ingested = await call('POST', '/api/traces', { 'x-api-key': apiKey }, { traces: [trace] });
    expect(ingested.status).toBe(200);
    expect(ingested.body.data).toMatchObject({ accepted: 1, rejected: 0 });

    expect(await service.stop()).toBe(0);
    // The embedded PostgreSQL was stopped with the service.
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    service = await startService(env);
    // Migrations were applied once, on the first start only.
    expect(service.output()).not.toMatch(/migrations applied/);
    expect((await call('GET', '/api/me', { 'x-api-key': apiKey })).status).toBe(200);
    // ClickHouse data survived too.
    const read = await call('GET', '/api/traces/restart-trace-1', { 'x-api-key': apiKey });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ traceId: 'restart-trace-1', name: 'kept across restarts', status: 'completed', spanCount: 1 });
    expect(read.body.data.spans).toHaveLength(1);
    const again = await call('POST', '/api/admin/organizations', { 'x-admin-token': adminToken }, { name: 'kept', plan: 'free' });
    expect(again.status).toBe(409);
    expect(await service.stop()).toBe(0);
    service = undefined;
  }, 180_000);
});
