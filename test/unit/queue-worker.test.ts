import { describe, expect, it } from 'vitest';
import { createQueueWorkerLoop } from '../../src/stores/queue-worker.js';

describe('the queue worker loop', () => {
  it('reports a streak of failed rounds once, again only after failureReportMs, and its end once', async () => {
    let clock = 0;
    let down = true;
    const reports: number[] = [];
    const recoveries: number[] = [];
    let taken = 0;
    const worker = createQueueWorkerLoop({
      concurrency: 2,
      pollIntervalMs: 1,
      failureReportMs: 1_000,
      now: () => clock,
      takeOne: async () => {
        if (down) throw new Error('store down');
        if (taken >= 3) return false;
        taken += 1;
        return true;
      },
      onRoundError: (_error, failedRounds) => reports.push(failedRounds),
      onRecovered: (failedRounds) => recoveries.push(failedRounds),
    });
    worker.start();
    // Many rounds fail within one report period: one report.
    await expect.poll(() => reports.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reports).toEqual([1]);
    // Past the period, the streak is reported again with its count.
    clock = 1_000;
    await expect.poll(() => reports.length).toBe(2);
    expect(reports[1]).toBeGreaterThan(1);
    down = false;
    await expect.poll(() => recoveries.length).toBe(1);
    expect(recoveries[0]).toBeGreaterThanOrEqual(reports[1]!);
    await expect.poll(() => taken).toBe(3);
    await worker.stop();
    expect(reports).toHaveLength(2);
    expect(recoveries).toHaveLength(1);
  });

  it('reports a new streak at once after a recovery', async () => {
    let fail = true;
    const reports: number[] = [];
    const worker = createQueueWorkerLoop({
      concurrency: 1,
      pollIntervalMs: 1,
      now: () => 0,
      takeOne: async () => {
        if (fail) throw new Error('down');
        return false;
      },
      onRoundError: (_error, failedRounds) => reports.push(failedRounds),
    });
    worker.start();
    await expect.poll(() => reports.length).toBe(1);
    fail = false;
    await new Promise((resolve) => setTimeout(resolve, 20));
    fail = true;
    await expect.poll(() => reports.length).toBe(2);
    expect(reports).toEqual([1, 1]);
    await worker.stop();
  });
});
