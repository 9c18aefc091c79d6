import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppliedWrites, FlushTiming, WriteBacklog } from '../../src/traces/writer/write-batcher.js';

/** Whether a promise has settled, after the microtasks queued so far ran. */
async function settled(promise: Promise<unknown>): Promise<'resolved' | 'rejected' | 'pending'> {
  let state: 'resolved' | 'rejected' | 'pending' = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await Promise.resolve();
  await Promise.resolve();
  return state;
}

describe('applied writes: what a read waits for', () => {
  it('names the last unapplied write of a workspace, or of some of its traces, and nothing once applied', () => {
    const applied = new AppliedWrites(0);
    applied.answered({ seq: 1, workspaceId: 'w1', traceIds: ['a'] });
    applied.answered({ seq: 2, workspaceId: 'w2', traceIds: ['b'] });
    applied.answered({ seq: 3, workspaceId: 'w1', traceIds: ['c'] });
    expect(applied.pendingFor('w1')).toBe(3);
    expect(applied.pendingFor('w1', ['a'])).toBe(1);
    expect(applied.pendingFor('w1', ['b'])).toBeUndefined();
    expect(applied.pendingFor('w3')).toBeUndefined();
    applied.done([{ seq: 1, workspaceId: 'w1', traceIds: ['a'] }]);
    expect(applied.appliedThrough).toBe(1);
    expect(applied.pendingFor('w1', ['a'])).toBeUndefined();
    expect(applied.pendingFor('w1')).toBe(3);
    applied.done([
      { seq: 2, workspaceId: 'w2', traceIds: ['b'] },
      { seq: 3, workspaceId: 'w1', traceIds: ['c'] },
    ]);
    expect(applied.pendingFor('w1')).toBeUndefined();
    expect(applied.pendingFor('w2')).toBeUndefined();
  });

  it('keeps a trace pending until its last write is applied, not its first', () => {
    const applied = new AppliedWrites(0);
    applied.answered({ seq: 1, workspaceId: 'w', traceIds: ['t'] });
    applied.answered({ seq: 2, workspaceId: 'w', traceIds: ['t'] });
    applied.done([{ seq: 1, workspaceId: 'w', traceIds: ['t'] }]);
    expect(applied.pendingFor('w', ['t'])).toBe(2);
  });

  it('takes no wait for a write answered after it was applied (a replayed write)', () => {
    const applied = new AppliedWrites(5);
    applied.answered({ seq: 4, workspaceId: 'w', traceIds: ['t'] });
    expect(applied.pendingFor('w')).toBeUndefined();
    applied.reopenFrom(4);
    expect(applied.appliedThrough).toBe(3);
    applied.answered({ seq: 4, workspaceId: 'w', traceIds: ['t'] });
    expect(applied.pendingFor('w')).toBe(4);
  });

  it('releases each waiting read once the writes it waits for are applied, and rejects them all on demand', async () => {
    const applied = new AppliedWrites(0);
    const first = applied.waitFor(1);
    const second = applied.waitFor(2);
    expect(applied.anyWaiting).toBe(true);
    applied.done([{ seq: 1, workspaceId: 'w', traceIds: [] }]);
    expect(await settled(first)).toBe('resolved');
    expect(await settled(second)).toBe('pending');
    expect(await settled(applied.waitFor(1))).toBe('resolved');
    applied.rejectWaiting(new Error('store down'));
    await expect(second).rejects.toThrow('store down');
    expect(applied.anyWaiting).toBe(false);
  });
});

describe('the write backlog', () => {
  it('is full at its bound, and wakes the writers waiting for room once rows are released below it', async () => {
    const backlog = new WriteBacklog(10);
    backlog.add(6);
    expect(backlog.full).toBe(false);
    backlog.add(4);
    expect(backlog.full).toBe(true);
    const room = backlog.room();
    backlog.release(0);
    expect(await settled(room)).toBe('pending');
    backlog.release(1);
    expect(backlog.full).toBe(false);
    expect(await settled(room)).toBe('resolved');
  });

  it('wakes the waiters on demand (the store is failing: they look again and hear it)', async () => {
    const backlog = new WriteBacklog(1);
    backlog.add(5);
    const room = backlog.room();
    backlog.wake();
    expect(await settled(room)).toBe('resolved');
    expect(backlog.full).toBe(true);
  });
});

describe('flush timing', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const timing = (options: Partial<ConstructorParameters<typeof FlushTiming>[0]> = {}) => {
    const starts: boolean[] = [];
    const made = new FlushTiming({ gathers: false, maxGatherMs: 8, minFlushIntervalMs: 0, ...options }, (retry) => starts.push(retry));
    return { made, starts };
  };

  it('with a log and no rest between flushes, never holds a flush back', () => {
    const { made } = timing();
    expect(made.waits(1, false)).toBe(false);
    made.started();
    made.ended(1, 0);
    expect(made.waits(1, false)).toBe(false);
  });

  it('rests the least interval between two flushes, unless a read waits or hurries it', () => {
    vi.useFakeTimers();
    const { made, starts } = timing({ minFlushIntervalMs: 100 });
    made.started();
    made.ended(1, 0);
    expect(made.waits(1, true)).toBe(false);
    expect(made.waits(1, false)).toBe(true);
    made.hurry();
    expect(made.waits(1, true)).toBe(false);
    expect(made.waits(1, false)).toBe(true);
    vi.advanceTimersByTime(100);
    expect(starts).toEqual([false]);
  });

  it('after a failure waits a delay doubled at each failure in a row, from 100 ms to 5 s, which a read does not hurry', () => {
    vi.useFakeTimers();
    const { made, starts } = timing();
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      made.failed();
      const before = starts.length;
      expect(made.waits(1, true)).toBe(true);
      made.hurry();
      let ms = 0;
      while (starts.length === before) {
        vi.advanceTimersByTime(50);
        ms += 50;
      }
      delays.push(ms);
    }
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    expect(starts.every((retry) => retry)).toBe(true);
    made.landed();
    made.failed();
    made.waits(1, false);
    vi.advanceTimersByTime(100);
    expect(starts).toHaveLength(9);
  });

  it('with the disk full retries every half second at most', () => {
    vi.useFakeTimers();
    const { made, starts } = timing();
    for (let i = 0; i < 5; i++) made.failed(true);
    expect(made.waits(1, false)).toBe(true);
    vi.advanceTimersByTime(499);
    expect(starts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(starts).toEqual([true]);
  });

  it('without a log, gathers as many writes as the last flush carried, for at most a quarter of its time', () => {
    vi.useFakeTimers();
    const { made, starts } = timing({ gathers: true, maxGatherMs: 8 });
    made.started();
    vi.advanceTimersByTime(40);
    made.ended(3, 1);
    expect(made.waits(1, false)).toBe(true);
    made.arrived(2);
    expect(made.waits(2, false)).toBe(true);
    made.arrived(4);
    expect(made.waits(4, false)).toBe(false);
    made.started();
    vi.advanceTimersByTime(40);
    made.ended(4, 0);
    expect(made.waits(1, false)).toBe(true);
    vi.advanceTimersByTime(8);
    expect(starts).toEqual([false]);
    expect(made.waits(1, false)).toBe(false);
  });

  it('lets a lone caller through without gathering', () => {
    const { made } = timing({ gathers: true });
    made.started();
    made.ended(1, 0);
    expect(made.waits(1, false)).toBe(false);
  });
});
