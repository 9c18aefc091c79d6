import { child } from './ingest-child.js';
import { median, readPairs, sampleReads, serviceGet } from './ingest-load.js';

/**
 * Times GET /api/traces and GET /api/traces/:id from this process, one read at a time: `sample`
 * answers `count` of each; `start` reads list then trace until `stop`, then answers every time.
 */
export async function readerRole() {
  const { url, key, traceId, interval } = JSON.parse(process.env.BENCH_READER!) as {
    url: string;
    key: string;
    traceId: string;
    interval: number;
  };
  const get = serviceGet(url, key);
  const list = get('/api/traces');
  const detail = get(`/api/traces/${traceId}`);
  let stopping = false;
  const onMessage = async (message: { type: string; count?: number }) => {
    if (message.type === 'sample') {
      process.send!({
        type: 'sampled',
        list: await sampleReads(list, { count: message.count }),
        detail: await sampleReads(detail, { count: message.count }),
      });
    } else if (message.type === 'start') {
      stopping = false;
      process.send!({ type: 'sampled', ...(await readPairs({ list, detail }, interval, () => stopping)) });
    } else if (message.type === 'stop') stopping = true;
    else process.exit(0);
  };
  process.on('message', (message: { type: string; count?: number }) => void onMessage(message));
  process.send!({ type: 'ready' });
}

export interface ReaderTimes {
  list: number[];
  detail: number[];
}

export async function startReader(url: string, key: string, traceId: string, interval: number) {
  const answers: Array<(times: ReaderTimes) => void> = [];
  let ready: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const proc = child('reader', { BENCH_READER: JSON.stringify({ url, key, traceId, interval }) }, (message) => {
    if (message.type === 'ready') ready();
    else if (message.type === 'sampled') answers.shift()?.(message);
  });
  await started;
  const ask = (message: object) =>
    new Promise<ReaderTimes>((resolve) => {
      answers.push(resolve);
      proc.send(message);
    });
  return {
    /** Medians of `count` reads of each, one after the other. */
    async sample(count: number) {
      return medians(await ask({ type: 'sample', count }));
    },
    /** Every read's time while `load` runs. */
    async sampleUntil(load: Promise<unknown>): Promise<ReaderTimes> {
      const times = ask({ type: 'start' });
      await load.catch(() => undefined);
      proc.send({ type: 'stop' });
      return times;
    },
    close: () => proc.send({ type: 'exit' }),
  };
}

export const medians = (times: ReaderTimes) => ({ list: median(times.list), detail: median(times.detail) });
