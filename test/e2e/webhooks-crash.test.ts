import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { connectPostgres, type Sql } from '../../src/stores/postgres.js';
import { createWebhookWorker } from '../../src/prompts/service/webhook-worker.js';
import { createTargetGuard } from '../../src/egress/target-guard.js';
import { startService, type ServiceProcess } from '../support/process.js';
import { withDatabase } from '../support/stores.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-webhooks-'));
const apiKey = 'lpk_e2e_webhooks_key_0123456789abcdef';
const database = `loupe_e2e_wh_${randomBytes(4).toString('hex')}`;
let admin: Sql;
let sql: Sql;
let env: Record<string, string>;
let service: ServiceProcess | undefined;
let receiver: WebhookReceiver;

beforeAll(async () => {
  admin = connectPostgres(inject('postgresUrl'), { max: 1 });
  await admin.unsafe(`create database ${database}`);
  const url = withDatabase(inject('postgresUrl'), database);
  sql = connectPostgres(url, { max: 4 });
  env = {
    DATABASE_URL: url,
    LOUPE_DATA_DIR: dataDir,
    LOUPE_BOOTSTRAP_API_KEY: apiKey,
    LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
  };
  // The first request is never answered (the service dies while it waits); later ones get 200.
  receiver = await startReceiver((index) => (index === 0 ? 'hang' : { status: 200 }));
});
afterAll(async () => {
  if (service) process.kill(-service.child.pid!, 'SIGKILL');
  await receiver?.close();
  await sql?.end({ timeout: 5 });
  await admin?.unsafe(`drop database if exists ${database} with (force)`).catch(() => {});
  await admin?.end({ timeout: 5 });
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(method: string, url: string, body?: unknown) {
  const res = await fetch(`${service!.baseUrl}${url}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

const deliveryRows = () => sql<{ status: string; attempts: number }[]>`select status, attempts from webhook_deliveries`;

describe('webhooks across a crash', () => {
  it('a delivery in flight when the service is killed is delivered by the next worker, once; the service delivers on its own and stops on SIGTERM', async () => {
    service = await startService(env);
    const hook = await call('POST', '/api/webhooks', { url: receiver.url, events: ['prompt.version.created'] });
    expect(hook.status).toBe(201);
    const created = await call('POST', '/api/prompt', { name: 'crash-test', systemPrompt: 'x' });
    expect(created.status).toBe(201);

    // The service's own worker claims the delivery and sends it; the receiver holds it.
    await receiver.waitFor(1);
    process.kill(-service.child.pid!, 'SIGKILL');
    await new Promise<void>((resolve) =>
      service!.child.exitCode !== null || service!.child.signalCode !== null ? resolve() : service!.child.once('exit', () => resolve()),
    );
    service = undefined;
    // The attempt was never recorded: the claim died with the process's transaction.
    expect(await deliveryRows()).toEqual([{ status: 'pending', attempts: 0 }]);

    // Another replica's worker (here, one in the test) delivers it as soon as the database
    // has ended the dead transaction.
    const worker = createWebhookWorker({
      sql,
      guard: createTargetGuard({ allowPrivate: true, allowSetting: 'LOUPE_WEBHOOK_ALLOW_PRIVATE' }),
      timeoutMs: 2_000,
    });
    const deadline = Date.now() + 20_000;
    while ((await deliveryRows())[0]!.status !== 'delivered') {
      if (Date.now() > deadline) throw new Error('the delivery was not recovered');
      await worker.runOnce();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await deliveryRows()).toEqual([{ status: 'delivered', attempts: 1 }]);
    expect(receiver.received).toHaveLength(2);
    const [first, second] = receiver.received.map((r) => JSON.parse(r.body));
    expect(second).toEqual(first);
    expect(receiver.received[1]!.headers['idempotency-key']).toBe(first.id);

    // Restarted, the service delivers new changes itself, never the one answered 2xx again.
    service = await startService(env);
    await call('POST', `/api/prompt/${created.body.data.id}/versions`, { newVersion: '1.1.0', changes: { systemPrompt: 'y' } });
    await receiver.waitFor(3);
    await new Promise((r) => setTimeout(r, 2_500)); // two more polling rounds of the service's worker
    expect(receiver.received).toHaveLength(3);
    expect(JSON.parse(receiver.received[2]!.body).data.version).toBe('1.1.0');
    expect(await service.stop()).toBe(0);
    service = undefined;
  }, 180_000);
});
