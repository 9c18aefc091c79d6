import { afterEach, describe, expect, it, vi } from 'vitest';
import { scoreWriterBounds } from '../../src/scores/service/score-writes.js';
import { FlushTiming, maxGatherMs } from '../../src/traces/writer/write-batcher.js';

/**
 * The score writer's flushes are gathered (docs/decisions/116-score-flushes-gathered.md): after
 * a flush starts, the next waits for the rest of a second unless a read waits or hurries it, so a
 * burst of requests lands in a few large inserts.
 */
describe("the score writer's flush timing", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const scoreTiming = () => {
    const starts: boolean[] = [];
    const timing = new FlushTiming({ gathers: false, maxGatherMs, minFlushIntervalMs: scoreWriterBounds.minFlushIntervalMs }, (retry) =>
      starts.push(retry),
    );
    return { timing, starts };
  };

  it('starts the first flush at once, then the next a second after the last started', () => {
    vi.useFakeTimers();
    const { timing, starts } = scoreTiming();
    expect(timing.waits(1, false)).toBe(false);
    timing.started();
    timing.ended(1, 0);
    expect(timing.waits(3, false)).toBe(true);
    vi.advanceTimersByTime(scoreWriterBounds.minFlushIntervalMs - 50);
    expect(starts).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(starts).toEqual([false]);
  });

  it('does not hold a flush back from a read waiting, nor once a read hurries it', () => {
    vi.useFakeTimers();
    const { timing, starts } = scoreTiming();
    timing.started();
    timing.ended(1, 0);
    expect(timing.waits(1, true)).toBe(false);
    expect(timing.waits(1, false)).toBe(true);
    timing.hurry();
    expect(timing.waits(1, true)).toBe(false);
    expect(starts).toEqual([]);
  });
});
