import http from 'node:http';
import type { Options } from './ingest-options.js';
import type { Server } from './ingest-server.js';
import { fillStartTimes, fillTraceIds, makeBodyTemplate, spansPerTrace } from './ingest-data.js';
import { drive, type LoadResult } from './ingest-load.js';
import { exportRequest, spansPerRequest as otlpSpansPerRequest } from './otlp-data.js';

/**
 * The clients' connections: node:http with keep-alive, as a real SDK's exporter keeps its
 * connection. fetch cost the load generator 30-45% of a core at 16 clients of the
 * small-payload shape, taken from the service on a 2-core machine (docs/benchmarks.md).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function post(server: Server, url: string, body: string | Uint8Array, contentType: string, expect: (text: string) => boolean) {
  return new Promise<void>((resolve, reject) => {
    const req = http.request(
      `${server.url}${url}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': contentType, 'x-api-key': server.key, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200 || !expect(text)) reject(new Error(`${url} answered ${res.statusCode} ${text.slice(0, 300)}`));
          else resolve();
        });
      },
    );
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : Buffer.from(body));
  });
}

/**
 * A shape's figure counts until its last write is applied, not only answered: with the
 * write-ahead log the answer comes first, and the spans still to apply would flatter the rate.
 */
async function untilApplied(server: Server, load: Promise<LoadResult>): Promise<LoadResult> {
  const { counts: beforeCounts, log: beforeLog } = await server.applied();
  const before = { ...beforeCounts, log: beforeLog };
  const result = await load;
  const { seconds, counts, delay, log, service, peakRss, peakHeap } = await server.applied();
  const flushes = counts.flushes - before.flushes;
  return {
    ...result,
    seconds: result.seconds + seconds,
    applyingSeconds: seconds,
    loopDelay: delay,
    service,
    peakRss,
    peakHeap,
    ...(log &&
      before.log && {
        logSyncs: { count: log.syncs - before.log.syncs, ms: (log.syncMs - before.log.syncMs) / (log.syncs - before.log.syncs) },
      }),
    flushes: {
      count: flushes,
      rows: (counts.flushedRows - before.flushedRows) / flushes,
      ms: (counts.flushMs - before.flushMs) / flushes,
      insertMs: (counts.insertMs - before.insertMs) / flushes,
    },
  };
}

export const nativeLoad = (
  server: Server,
  tracesPerRequest: number,
  clients: number,
  maxSpans: number,
  maxSeconds: number,
  fixed: boolean,
) => {
  const template = makeBodyTemplate(tracesPerRequest);
  const body = fixed ? () => fillTraceIds(template) : () => fillTraceIds(fillStartTimes(template, Date.now()));
  return untilApplied(
    server,
    drive({
      clients,
      spansPerRequest: tracesPerRequest * spansPerTrace,
      maxSpans,
      maxSeconds,
      send: () => post(server, '/api/traces', body(), 'application/json', (t) => t.includes(`"accepted":${tracesPerRequest},`)),
    }),
  );
};

export async function otelLoad(server: Server, options: Options) {
  const { encodeProtobufRequest } = await import('../src/traces/ingest/otlp/wire/protobuf.js');
  const clients = 8;
  // Encoded before the clock starts: the figure is the server's. The clients may start one
  // request each past the span target (drive counts answered spans), so a body for each.
  const requests = Math.ceil(options.spans / otlpSpansPerRequest) + clients;
  const bodies = Array.from({ length: requests }, (_, r) => encodeProtobufRequest(exportRequest(7, r) as never));
  return untilApplied(
    server,
    drive({
      clients,
      spansPerRequest: otlpSpansPerRequest,
      maxSpans: options.spans,
      maxSeconds: options.seconds,
      send: (_client, request) => post(server, '/api/traces/otlp/v1/traces', bodies[request]!, 'application/x-protobuf', () => true),
    }),
  );
}
