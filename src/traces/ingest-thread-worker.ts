import { parentPort, workerData } from 'node:worker_threads';
import { priceSpan } from './cost/pricing.js';
import { WorkspacePriceIndex } from './cost/workspace-prices.js';
import type { IngestJob, IngestReply, IngestThreadData } from './ingest-thread.js';
import { prepareBody } from './prepare-body.js';
import { adoptVersionOrigin } from './rows.js';

/**
 * The ingest thread (ingest-thread.ts): prepares each native body it is sent (prepare-body.ts)
 * and sends back the answer and the rows. Workspaces' prices come with the jobs, once per
 * version of them, and are kept here by their number.
 */
const data = workerData as IngestThreadData;
adoptVersionOrigin(data.versionOrigin);
const port = parentPort!;
const indexes = new Map<number, WorkspacePriceIndex>();
const maxIndexes = 1_000;

function pricesOf(job: IngestJob): WorkspacePriceIndex | 'missing' | undefined {
  if (job.prices === null) return undefined;
  if (job.prices.list) {
    if (indexes.size >= maxIndexes) indexes.delete(indexes.keys().next().value!);
    indexes.set(job.prices.id, new WorkspacePriceIndex(job.prices.list));
  }
  return indexes.get(job.prices.id) ?? 'missing';
}

port.on('message', (job: IngestJob) => {
  let reply: IngestReply;
  try {
    const prices = pricesOf(job);
    if (prices === 'missing') reply = { id: job.id, missingPrices: true };
    else {
      const price = prices && ((span: Parameters<typeof priceSpan>[0]) => priceSpan(span, prices));
      reply = { id: job.id, prepared: prepareBody(job.text, job.shape, job.workspaceId, price) };
    }
  } catch (error) {
    reply = { id: job.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true } satisfies IngestReply);
