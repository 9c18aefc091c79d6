import net from 'node:net';
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { boundConnections } from '../../src/http/server/connection-bounds.js';

/**
 * The bounds on a listening server (decision 090): per address and in total, a connection over
 * either is closed by the server at once, and the refusals are told in one warning line.
 */

let app: FastifyInstance | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await app?.close();
});

async function boundedServer(bounds: { total: number; perAddress: number }) {
  const lines: string[] = [];
  const log = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    }),
  );
  app = Fastify();
  app.get('/', async () => ({ ok: true }));
  boundConnections(app.server, { ...bounds, openFileLimit: undefined }, log, { logIntervalMs: 60_000 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as net.AddressInfo).port;
  return { port, lines };
}

/** A connection from `localAddress` that sends nothing; resolves whether the server closed it within `ms`. */
function idleConnection(port: number, localAddress: string) {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  sockets.push(socket);
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    connected: new Promise<void>((resolve) => socket.once('connect', () => resolve())),
    closedWithin: (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]),
  };
}

describe('connection bounds', () => {
  it('closes a connection over its address bound at once, and leaves other addresses alone', async () => {
    const { port, lines } = await boundedServer({ total: 100, perAddress: 3 });
    const first = Array.from({ length: 3 }, () => idleConnection(port, '127.0.0.7'));
    await Promise.all(first.map((c) => c.connected));
    const over = idleConnection(port, '127.0.0.7');
    const elsewhere = idleConnection(port, '127.0.0.8');
    expect(await over.closedWithin(5000)).toBe(true);
    expect(await elsewhere.closedWithin(300)).toBe(false);
    for (const kept of first) expect(await kept.closedWithin(100)).toBe(false);
    expect(lines.length).toBe(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, refused: { perAddress: 1, total: 0 }, addresses: { '127.0.0.7': 1 } });
  });

  it('closes connections over the total, from any address, with one warning line for many refusals', async () => {
    const { port, lines } = await boundedServer({ total: 4, perAddress: 0 });
    const held = ['127.0.0.9', '127.0.0.10', '127.0.0.11', '127.0.0.12'].map((address) => idleConnection(port, address));
    await Promise.all(held.map((c) => c.connected));
    await new Promise((r) => setTimeout(r, 100)); // the server has accepted them
    const over = Array.from({ length: 5 }, () => idleConnection(port, '127.0.0.13'));
    for (const refused of over) expect(await refused.closedWithin(5000)).toBe(true);
    for (const kept of held) expect(await kept.closedWithin(100)).toBe(false);
    expect(lines.length).toBe(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ refused: { total: 1 }, bounds: { total: 4 } });
  });
});
