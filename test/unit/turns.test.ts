import { describe, expect, it } from 'vitest';
import { inTurns } from '../../src/http/turns.js';

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
