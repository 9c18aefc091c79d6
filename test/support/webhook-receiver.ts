import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** How the receiver answers the n-th request (0-based): a status and body, or `hang` (never answers). */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedRequest[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A local endpoint on 127.0.0.1, port 0: it records every request and answers as told. */
export async function startReceiver(
  answer: (index: number, request: ReceivedRequest) => Answer = () => ({ status: 200 }),
): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const index = received.push(request) - 1;
      const a = answer(index, request);
      if (a === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
      res.end(a.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
