import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, symlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/process.js';

/**
 * The disk under the ingest log and the trace store fills up (a small tmpfs, mounted by root):
 * ingest answers 503 naming ENOSPC, `/healthz` answers 503 "degraded" with the reason, the
 * service logs it once at error level, failed requests leave no empty log files, and once room
 * is freed the writes waiting are applied at once and every read answers again.
 */

const root = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-disk-full-'));
chmodSync(root, 0o755); // as root, the embedded PostgreSQL (user postgres) must enter it
/** Two small disks: one for the ingest log, one for the trace store, filled one after the other. */
const logDisk = path.join(root, 'log-disk');
const storeDisk = path.join(root, 'store-disk');
const logDir = path.join(logDisk, 'ingest-log');
const apiKey = 'lpk_e2e_disk_full_key_0123456789abcd';
const adminToken = 'e2e-disk-full-admin-token-0123456789';
let service: ServiceProcess | undefined;
const mounted: string[] = [];

afterAll(async () => {
  await service?.stop();
  // Lazily: a store process that has not let go yet must not fail the suite after its test.
  for (const disk of mounted) execFileSync('umount', ['-l', disk]);
  rmSync(root, { recursive: true, force: true });
});

function trace(traceId: string) {
  const at = new Date().toISOString();
  return {
    traces: [
      {
        traceId,
        source: 'sdk',
        spans: [
          {
            spanId: 's0',
            name: 'root',
            kind: 'agent',
            startTime: at,
            endTime: at,
            durationMs: 1,
            status: 'ok',
            input: { text: 'x'.repeat(20_000) },
          },
        ],
      },
    ],
  };
}

/** Writes the disk full with the file `filler`, to the last page; returns how many bytes it took. */
function fill(filler: string): number {
  const fd = openSync(filler, 'w');
  let bytes = 0;
  try {
    for (const size of [64 * 1024, 4096, 1]) {
      const block = Buffer.alloc(size, 1);
      try {
        for (;;) bytes += writeSync(fd, block);
      } catch (error) {
        expect((error as { code?: string }).code).toBe('ENOSPC');
      }
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

describe('a full disk under the ingest log and the trace store', () => {
  it('is reported in /healthz and logged once, leaves no empty files, and recovers as soon as there is room', async () => {
    for (const disk of [logDisk, storeDisk]) {
      mkdirSync(disk);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', disk]);
      mounted.push(disk);
    }
    // The trace store's folder on its small disk (the service keeps it in LOUPE_DATA_DIR/clickhouse).
    mkdirSync(path.join(storeDisk, 'clickhouse'));
    symlinkSync(path.join(storeDisk, 'clickhouse'), path.join(root, 'clickhouse'));
    service = await startService({
      LOUPE_DATA_DIR: root,
      LOUPE_INGEST_LOG_DIR: logDir,
      LOUPE_BOOTSTRAP_API_KEY: apiKey,
      LOUPE_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'info',
    });
    const base = service.baseUrl;
    const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
    // The reads below poll for up to 20 s: beyond the pro plan's 300 a minute, a loaded run heard
    // 429 instead of the recovery it waits for. The organization's own limits are raised.
    const me = await (await fetch(`${base}/api/me`, { headers })).json();
    const raised = await fetch(`${base}/api/admin/organizations/${me.data.organizationId}`, {
      method: 'PATCH',
      headers: { 'x-admin-token': adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'enterprise', rateLimitPerMinute: 1_000_000, rateLimitPerDay: 10_000_000 }),
    });
    expect(raised.status, await raised.text()).toBe(200);
    // Past the pro plan's minute at once: the raised limits hold.
    const burst = await Promise.all(Array.from({ length: 320 }, () => fetch(`${base}/api/me`, { headers }).then((res) => res.status)));
    expect(burst.filter((status) => status !== 200)).toEqual([]);
    const ingest = (id: string) => fetch(`${base}/api/traces`, { method: 'POST', headers, body: JSON.stringify(trace(id)) });
    const read = (url: string, init: RequestInit = {}) => fetch(`${base}${url}`, { headers, ...init });

    expect((await (await ingest('before-full')).json()).data.accepted).toBe(1);
    expect((await read('/api/traces/before-full')).status).toBe(200);
    const logFiller = path.join(logDisk, 'filler');
    fill(logFiller);

    // The log's disk is full. Ingest: 503 with Retry-After, the first failure already naming ENOSPC.
    const first = await ingest('while-full-0');
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBeTruthy();
    expect((await first.json()).error.message).toMatch(/The ingest log could not be written \(ENOSPC/);
    // That failure ended the segment, and one whose writes are all applied is deleted: filled again.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    fill(`${logFiller}-2`);
    for (let i = 1; i < 4; i += 1) expect((await ingest(`while-full-${i}`)).status).toBe(503);
    // Failed requests leave no files without an acknowledged line.
    const segments = readdirSync(logDir).filter((name) => name.endsWith('.log'));
    for (const name of segments) expect(statSync(path.join(logDir, name)).size, name).toBeGreaterThan(0);
    // Health: 503, degraded, with the reason; well again once the disk has room.
    const health = await read('/healthz');
    expect(health.status).toBe(503);
    const details = (await health.json()).error.details;
    expect(details).toMatchObject({ status: 'degraded', postgres: 'ok', clickhouse: 'ok', ingest: 'degraded' });
    expect(details.reasons.join(' ')).toMatch(/disk full: the ingest log/);
    rmSync(logFiller);
    rmSync(`${logFiller}-2`);
    expect((await read('/healthz')).status).toBe(200);

    // The store's disk is full: the log takes the write, the flush cannot (the store reserves
    // 1 MiB for a part); until it lands, new writes are refused so that room goes to it.
    const storeFiller = path.join(storeDisk, 'filler');
    fill(storeFiller);
    const waiting = await (await ingest('waiting')).json();
    expect(waiting.data?.accepted, JSON.stringify(waiting)).toBe(1);
    const waitingDeadline = Date.now() + 20_000;
    while ((await read('/api/traces/waiting')).status !== 503 && Date.now() < waitingDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await read('/api/traces/waiting')).status).toBe(503);
    expect((await ingest('refused')).status).toBe(503);
    const storeHealth = await read('/healthz');
    expect(storeHealth.status).toBe(503);
    expect((await storeHealth.json()).error.details.reasons.join(' ')).toMatch(/disk full: the trace store/);

    // Room again, the whole filler's, so the waiting write has room whatever the store's own
    // work in the background (a migration's mutation, a merge, a text index) takes first: it is
    // applied at once, and every read answers.
    execFileSync('truncate', ['-s', '0', storeFiller]);
    const freed = Date.now();
    const deadline = freed + 20_000;
    let recoveredAfter: number | undefined;
    let lastStatuses: number[] = [];
    while (Date.now() < deadline) {
      const answers = await Promise.all([
        read('/api/traces'),
        read('/api/traces/waiting'),
        read('/api/sql', { method: 'POST', body: JSON.stringify({ query: 'SELECT count() AS n FROM traces' }) }),
        read('/healthz'),
      ]);
      lastStatuses = answers.map((res) => res.status);
      if (answers.every((res) => res.status === 200)) {
        recoveredAfter = Date.now() - freed;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Retried every half second while the disk is full, not on a backoff of seconds.
    expect(recoveredAfter, `list, trace, sql, healthz answered ${lastStatuses.join(', ')}`).toBeDefined();
    expect(recoveredAfter!).toBeLessThan(3_000);
    rmSync(storeFiller);
    const after = await (await ingest('after-full')).json();
    expect(after.data?.accepted, JSON.stringify(after)).toBe(1);
    expect((await read('/api/traces/after-full')).status).toBe(200);
    expect((await read('/healthz')).status).toBe(200);

    // Logged at error level once when the disk fills (not once per refused request), and once
    // at warn when it has room again: as many of one as of the other, the log's and the store's.
    const lines = service.output().split('\n');
    const errors = lines.filter((line) => line.includes('"level":50'));
    const began = errors.filter((line) => line.includes('disk full'));
    const ended = lines.filter((line) => line.includes('"level":40') && line.includes('resolved, the disk has room again'));
    expect(errors.length, errors.map((line) => line.slice(0, 300)).join('\n')).toBe(began.length);
    expect(began.length).toBe(ended.length);
    expect(began.some((line) => line.includes('the ingest log cannot be written') && line.includes('ENOSPC'))).toBe(true);
    expect(began.some((line) => line.includes('the trace store cannot store'))).toBe(true);
    expect(began.length).toBeLessThan(5); // five requests refused
  }, 180_000);
});
