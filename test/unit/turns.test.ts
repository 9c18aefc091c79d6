import { describe, expect, it } from 'vitest';
import { inTurns, Turns } from '../../src/http/server/turns.js';

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('inTurns', () => {
  it('lets waiting events run between the steps of a long computation, every few ms', async () => {
    let ranAt = -1;
    let step = 0;
    setImmediate(() => (ranAt = step));
    const turn = inTurns(3);
    for (step = 0; step < 20; step += 1) {
      await turn();
      busy(1);
    }
    // The event ran once about 3 ms had passed, not after the 20 ms of work.
    expect(ranAt).toBeGreaterThan(0);
    expect(ranAt).toBeLessThan(10);
  });

  it('does not pause before `ms` have passed', async () => {
    const turn = inTurns(1_000);
    for (let i = 0; i < 100; i += 1) expect(turn()).toBeUndefined();
  });
});

describe('Turns', () => {
  it('runs one step a turn of the event loop, in the order asked, with what arrived meanwhile in between', async () => {
    const turns = new Turns();
    const ran: string[] = [];
    const steps = ['a', 'b', 'c'].map(async (name) => {
      await turns.take();
      ran.push(name);
      busy(1);
    });
    // Queued after the three asked: without turns it would run after all three steps.
    setImmediate(() => ran.push('other'));
    await Promise.all(steps);
    expect(ran).toEqual(['a', 'other', 'b', 'c']);
  });

  it('lets a long step go on until `ms` passed since its turn began, then gives the turn up', async () => {
    const turns = new Turns();
    await turns.take();
    expect(turns.pause(1_000)).toBeUndefined();
    let other = false;
    setImmediate(() => (other = true));
    busy(3);
    const paused = turns.pause(2);
    expect(paused).toBeInstanceOf(Promise);
    expect(other).toBe(false);
    await paused;
    expect(other).toBe(true);
    expect(turns.pause(1_000)).toBeUndefined();
  });
});
