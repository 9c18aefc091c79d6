import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/process.js';

/**
 * Nothing answered is lost when the service is killed: an ingest is answered once it is in the
 * write-ahead log on disk (src/traces/writer/ingest-log.ts), and the next start applies what the log
 * kept. The service, its PostgreSQL and the npm wrapper are killed together with SIGKILL the
 * moment an answer arrives, while other writes are still in flight.
 */

const dataDir = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-ingest-crash-'));
const apiKey = 'lpk_e2e_ingest_crash_key_0123456789ab';
const env = { LOUPE_DATA_DIR: dataDir, LOUPE_BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'info' };
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const spansPerTrace = 3;
function trace(traceId: string) {
  const start = Date.parse('2026-07-01T09:00:00Z');
  return {
    traceId,
    source: 'sdk',
    userId: 'crash-user',
    spans: Array.from({ length: spansPerTrace }, (_, i) => ({
      spanId: `s${i}`,
      ...(i > 0 ? { parentSpanId: 's0' } : {}),
      name: `step ${i}`,
      kind: i === 0 ? 'agent' : 'llm.chat',
      startTime: new Date(start + i).toISOString(),
      endTime: new Date(start + i + 5).toISOString(),
      durationMs: 5,
      status: 'ok',
      ...(i > 0 ? { model: 'm', inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.5 } : {}),
    })),
  };
}

describe('ingest across kill -9', () => {
  it('applies on the next start every write answered before the kill, exactly once', async () => {
    service = await startService(env);
    const running = service;
    const answered: string[] = [];
    let killed = false;
    const killAt = 120;
    // 240 single-trace requests, 24 at a time: the kill comes with the 120th answer.
    const ids = Array.from({ length: 240 }, (_, i) => `crash-${String(i).padStart(3, '0')}`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        while (!killed && next < ids.length) {
          const id = ids[next++]!;
          try {
            const res = await fetch(`${running.baseUrl}/api/traces`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
              body: JSON.stringify({ traces: [trace(id)] }),
            });
            if (res.status !== 200) continue;
            answered.push(id);
            if (answered.length === killAt && !killed) {
              killed = true;
              process.kill(-running.child.pid!, 'SIGKILL');
            }
          } catch {
            // the connection died with the service: not answered
          }
        }
      }),
    );
    expect(killed).toBe(true);
    expect(answered.length).toBeGreaterThanOrEqual(killAt);
    // The log kept what the process had not finished with.
    const logDir = path.join(dataDir, 'ingest-log');
    expect(readdirSync(logDir).filter((f) => f.endsWith('.log')).length).toBeGreaterThan(0);

    service = await startService(env);
    expect(service.output()).toMatch(/applying the ingest writes an earlier process left in its log/);
    const get = async (url: string) => {
      const res = await fetch(`${service!.baseUrl}${url}`, { headers: { 'x-api-key': apiKey } });
      expect(res.status, url).toBe(200);
      return (await res.json()).data;
    };
    for (const id of answered) expect(await get(`/api/traces/${id}`), id).toMatchObject({ spanCount: spansPerTrace, costUsd: 1 });
    // Applied once: each stored trace counts once in its user's figures (a write the kill cut off
    // before its answer may be stored too, or not).
    const user = await get('/api/users/crash-user?startAfter=2026-07-01T00:00:00Z&startBefore=2026-07-02T00:00:00Z');
    expect(user.traceCount).toBeGreaterThanOrEqual(answered.length);
    expect(user.traceCount).toBeLessThanOrEqual(ids.length);
    expect(user).toMatchObject({ costUsd: user.traceCount, inputTokens: 20 * user.traceCount });
    // A clean stop applies everything and leaves the log empty.
    expect(await service.stop()).toBe(0);
    service = undefined;
    expect(readdirSync(logDir).filter((f) => f.endsWith('.log'))).toEqual([]);
  });
});
