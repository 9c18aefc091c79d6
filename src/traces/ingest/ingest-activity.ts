import type { IngestActivity } from '../../contract/ingest-activity.js';

const WINDOW_MS = 1000;

/**
 * The requests in flight, and the times the requests of the last second began (oldest first,
 * trimmed as the window moves): a count that drops to nothing a second after ingest stops.
 */
export function createIngestActivity(now: () => number = Date.now): IngestActivity {
  const times: number[] = [];
  let head = 0;
  let inFlight = 0;
  const trim = () => {
    const from = now() - WINDOW_MS;
    while (head < times.length && times[head]! <= from) head += 1;
    // The array is compacted once its dead head outgrows what is live.
    if (head > 1024 && head * 2 > times.length) {
      times.splice(0, head);
      head = 0;
    }
  };
  return {
    begin() {
      times.push(now());
      trim();
      inFlight += 1;
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        inFlight -= 1;
      };
    },
    recentRequests() {
      trim();
      return inFlight + times.length - head;
    },
  };
}
