/**
 * Tenant isolation under bad data: `npm run bench -- isolation [--requests 200] [--concurrency 16]`.
 *
 * One service on embedded stores in a temp directory, two organizations. While the first
 * sends traces whose span `name` and `model` hold a lone surrogate ("x\ud800", text no UTF-8
 * store can hold), natively and through OTLP/JSON, the second sends valid traces at the same
 * time; both share the service's group commit. Prints each tenant's answers by status and the
 * second tenant's success rate. Only HTTP and `startServer`, so it runs on older code too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const n = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number`);
  return n;
}

const span = (i: number, name: string, model: string) => ({
  spanId: `s${i}`,
  name,
  kind: 'llm.chat',
  model,
  startTime: new Date(Date.now() - 1000).toISOString(),
  endTime: new Date().toISOString(),
  durationMs: 1000,
  inputTokens: 10,
  status: 'ok',
});

const otlpBody = (i: number) => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: i.toString(16).padStart(32, '0'),
              spanId: '1'.padStart(16, '0'),
              name: 'chat\ud800',
              kind: 1,
              startTimeUnixNano: String(BigInt(Date.now() - 1000) * 1_000_000n),
              endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
              attributes: [{ key: 'gen_ai.request.model', value: { stringValue: 'gpt\ud800' } }],
            },
          ],
        },
      ],
    },
  ],
});

export async function run(args: string[]) {
  const requests = option(args, 'requests', 200);
  const concurrency = option(args, 'concurrency', 16);
  const dir = mkdtempSync(path.join(tmpdir(), 'loupe-bench-isolation-'));
  const adminToken = 'bench-admin-token-0123456789';
  const { loadConfig } = await import('../src/config.js');
  const { startServer } = await import('../src/server.js');
  const server = await startServer(
    loadConfig({ LOUPE_DATA_DIR: dir, PORT: '0', LOUPE_OTLP_GRPC_PORT: '0', LOG_LEVEL: 'silent', LOUPE_ADMIN_TOKEN: adminToken }),
  );
  try {
    const admin = async (url: string, body: unknown) => {
      const res = await fetch(`${server.url}${url}`, {
        method: 'POST',
        headers: { 'x-admin-token': adminToken, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return ((await res.json()) as { data: Record<string, string> }).data;
    };
    const tenant = async (name: string) => {
      const org = await admin('/api/admin/organizations', {
        name,
        plan: 'enterprise',
        rateLimitPerMinute: 1_000_000,
        rateLimitPerDay: 10_000_000,
      });
      const ws = await admin(`/api/admin/organizations/${org.id}/workspaces`, { name: 'main' });
      return (await admin('/api/admin/api-keys', { scope: 'workspace', organizationId: org.id, workspaceId: ws.id })).key!;
    };
    const [bad, good] = [await tenant('sender-of-bad-text'), await tenant('bystander')];
    const post = async (key: string, url: string, body: unknown) => {
      const res = await fetch(`${server.url}${url}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res.status;
    };
    const statuses = { bad: new Map<number, number>(), good: new Map<number, number>() };
    const count = (map: Map<number, number>, status: number) => map.set(status, (map.get(status) ?? 0) + 1);
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < requests; i = next++) {
          const badRequest =
            i % 2 === 0
              ? post(bad, '/api/traces', { traces: [{ traceId: `bad-${i}`, source: 'bench', spans: [span(i, 'x\ud800', 'm\ud800')] }] })
              : post(bad, '/api/traces/otlp/v1/traces', otlpBody(i));
          const goodRequest = post(good, '/api/traces', {
            traces: [{ traceId: `good-${i}`, source: 'bench', spans: [span(i, 'fine', 'gpt-4o')] }],
          });
          const [b, g] = await Promise.all([badRequest, goodRequest]);
          count(statuses.bad, b);
          count(statuses.good, g);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const ok = statuses.good.get(200) ?? 0;
    console.log(`${requests} requests per tenant, ${concurrency} at a time, ${seconds.toFixed(1)} s`);
    console.log(`first tenant (lone surrogates, native and OTLP): ${JSON.stringify(Object.fromEntries(statuses.bad))}`);
    console.log(`second tenant (valid traces): ${JSON.stringify(Object.fromEntries(statuses.good))}`);
    console.log(`second tenant's success rate: ${((100 * ok) / requests).toFixed(1)}% (${ok} of ${requests})`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
