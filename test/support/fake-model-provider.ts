import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local fake OpenAI-compatible server: it answers chat completions with the JSON the test
 * sets (and the token usage a provider reports), or with the statuses queued in `failures`
 * first, after `delayMs`. `busiest` keeps, per API key, the most requests it held at once.
 */
export interface FakeProvider {
  url: string;
  requests: { headers: http.IncomingHttpHeaders; body: Record<string, unknown> }[];
  answer: unknown;
  failures: number[];
  delayMs: number;
  usage: { prompt_tokens: number; completion_tokens: number };
  busiest: Map<string, number>;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const fake: Omit<FakeProvider, 'url' | 'close'> = {
    requests: [],
    answer: { value: 0.9, reasoning: 'it is right' },
    failures: [],
    delayMs: 0,
    usage: { prompt_tokens: 120, completion_tokens: 30 },
    busiest: new Map(),
  };
  const holding = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    const key = String(req.headers.authorization);
    holding.set(key, (holding.get(key) ?? 0) + 1);
    fake.busiest.set(key, Math.max(fake.busiest.get(key) ?? 0, holding.get(key)!));
    res.on('finish', () => holding.set(key, holding.get(key)! - 1));
    req.on('end', () => {
      fake.requests.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
      const failure = fake.failures.shift();
      const answer = () => {
        if (failure !== undefined) {
          res.writeHead(failure, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `fake failure ${failure} for key ${String(req.headers.authorization)}` } }));
          return;
        }
        const content = typeof fake.answer === 'string' ? fake.answer : JSON.stringify(fake.answer);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content } }],
            usage: { ...fake.usage, total_tokens: fake.usage.prompt_tokens + fake.usage.completion_tokens },
          }),
        );
      };
      if (fake.delayMs > 0) setTimeout(answer, fake.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
