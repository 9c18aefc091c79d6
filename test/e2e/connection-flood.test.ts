import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/process.js';

/**
 * A flood of connections without a key, as an attacker sends it (a large Content-Length, then
 * two bytes at a time), against the real service under a lowered open-file limit: the refused
 * connections are closed by the service, the bounds keep descriptors for everyone else, and
 * the health check and an authenticated tenant keep answering (decision 090). The flood comes
 * from its own loopback addresses (127.0.0.1, 127.0.0.4), the health check and the tenant from
 * others, as distinct clients would.
 */

const openFileLimit = 256; // bounds from it: 128 connections in total, 32 per address
const dataDir = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-connection-flood-'));
const apiKey = 'lpk_e2e_connection_flood_key_0123456789';
let service: ServiceProcess;
let port: number;
const opened: net.Socket[] = [];

beforeAll(async () => {
  service = await startService(
    {
      LOUPE_DATA_DIR: dataDir,
      LOUPE_BOOTSTRAP_API_KEY: apiKey,
      LOG_LEVEL: 'info',
      LOUPE_HEADERS_TIMEOUT_MS: '3000',
      LOUPE_REQUEST_TIMEOUT_MS: '8000',
      LOUPE_BODY_MIN_RATE: '1024',
      LOUPE_BODY_RATE_WINDOW_MS: '1000',
    },
    60_000,
    { openFileLimit },
  );
  port = Number(new URL(service.baseUrl).port);
}, 120_000);

afterAll(async () => {
  for (const socket of opened) socket.destroy();
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface SlowClient {
  socket: net.Socket;
  /** What the service sent. */
  received: () => string;
  /** Resolves true when the service closed the connection, false if it was still open at the deadline. */
  closedByService: (deadlineMs: number) => Promise<boolean>;
}

/** A connection that sends `head` at once, then `drip` every `everyMs`, for as long as it is open. */
function slowClient(localAddress: string, head: string, drip: string, everyMs: number): SlowClient {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  opened.push(socket);
  let received = '';
  let closed = false;
  const closing = new Promise<void>((resolve) => {
    const done = () => {
      closed = true;
      resolve();
    };
    socket.once('end', done);
    socket.once('close', done);
  });
  socket.on('error', () => {}); // a reset is one way the service closes it
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.once('connect', () => {
    socket.write(head);
    const timer = setInterval(() => {
      if (closed || socket.destroyed) clearInterval(timer);
      else socket.write(drip);
    }, everyMs);
  });
  return {
    socket,
    received: () => received,
    closedByService: async (deadlineMs) => {
      await Promise.race([closing, new Promise((r) => setTimeout(r, deadlineMs))]);
      return closed;
    },
  };
}

/** A GET from a given loopback address on a connection of its own, given up after 15 s (a hang, not a speed limit). */
function getFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: url, localAddress, headers, agent: false, timeout: 15_000 }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy(new Error(`${url} did not answer within 15 s`)));
    request.on('error', reject);
  });
}

const unauthenticatedUpload =
  'POST /api/traces HTTP/1.1\r\nHost: loupe\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"';

describe('a flood of connections without a key', () => {
  it('closes every refused connection, bounds the rest, and health and tenants keep answering', async () => {
    // More connections than the process may open files, trickling their bodies.
    const flood = Array.from({ length: 300 }, () => slowClient('127.0.0.1', unauthenticatedUpload, 'aa', 1000));
    // And connections that hold on by never finishing their headers.
    const slowHeaders = Array.from({ length: 60 }, () =>
      slowClient('127.0.0.4', 'POST /api/traces HTTP/1.1\r\nHost: loupe\r\n', 'X-Pad: a\r\n', 500),
    );
    await new Promise((r) => setTimeout(r, 1000));

    // While the flood holds what it can, the health check and a tenant answer.
    const health = await getFrom('127.0.0.2', '/healthz');
    expect(health.status, health.body).toBe(200);
    const list = await getFrom('127.0.0.3', '/api/traces?limit=5', { 'x-api-key': apiKey });
    expect(list.status, list.body).toBe(200);

    // Every refused upload is closed by the service, long before its body could arrive.
    const closed = await Promise.all(flood.map((client) => client.closedByService(10_000)));
    expect(closed.filter((c) => !c).length).toBe(0);
    const answered = flood.filter((client) => client.received() !== '');
    expect(answered.length).toBeGreaterThan(0);
    for (const client of answered) {
      // 401, or 429 once the address is over the failed-authentication limit.
      expect(client.received()).toMatch(/^HTTP\/1\.1 (401|429) /);
      expect(client.received().toLowerCase()).toContain('connection: close');
    }

    // Headers that never end are cut by the headers timeout (408); those over the bound at once.
    const headersClosed = await Promise.all(slowHeaders.map((client) => client.closedByService(10_000)));
    expect(headersClosed.filter((c) => !c).length).toBe(0);
    const timedOut = slowHeaders.filter((client) => client.received() !== '');
    expect(timedOut.length).toBeGreaterThan(0);
    expect(timedOut.length).toBeLessThanOrEqual(32);
    for (const client of timedOut) expect(client.received()).toMatch(/^HTTP\/1\.1 408 [^]*"code":"REQUEST_TIMEOUT"/);

    // The bound was hit and said so, once (the next line may come a minute later at the earliest).
    const lines = service.output().split('\n');
    expect(lines.filter((line) => line.includes('refusing new connections')).length).toBe(1);
    expect(service.output()).not.toMatch(/EMFILE|Too many open files/);

    // And the service still answers as before.
    expect((await getFrom('127.0.0.1', '/healthz')).status).toBe(200);
  }, 60_000);

  it('cuts a body that arrives slower than the floor with 408 and closes the connection', async () => {
    const body = JSON.stringify({ traces: [] }).padEnd(4000, ' ');
    const client = slowClient(
      '127.0.0.5',
      `POST /api/traces HTTP/1.1\r\nHost: loupe\r\nContent-Type: application/json\r\nx-api-key: ${apiKey}\r\nContent-Length: ${body.length}\r\n\r\n`,
      'a',
      100,
    );
    expect(await client.closedByService(10_000)).toBe(true);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(client.received()).toContain('"code":"REQUEST_TIMEOUT"');
    expect(client.received().toLowerCase()).toContain('connection: close');

    // The same body sent at once is taken.
    const fast = await fetch(`${service.baseUrl}/api/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body,
    });
    expect(fast.status).toBe(200);
  }, 30_000);

  it('cuts a body that keeps to the floor but never ends at the request timeout', async () => {
    const client = slowClient(
      '127.0.0.6',
      `POST /api/traces HTTP/1.1\r\nHost: loupe\r\nContent-Type: application/json\r\nx-api-key: ${apiKey}\r\nContent-Length: 10000000\r\n\r\n`,
      'a'.repeat(1024),
      250,
    );
    expect(await client.closedByService(20_000)).toBe(true);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(client.received()).toContain('"code":"REQUEST_TIMEOUT"');
    // The request cut while its body was being read leaves the service as it was.
    expect((await getFrom('127.0.0.6', '/healthz')).status).toBe(200);
    expect(service.child.exitCode).toBeNull();
  }, 30_000);
});
