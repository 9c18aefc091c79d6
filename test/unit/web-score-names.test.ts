import { describe, expect, it } from 'vitest';
import { scoreNameChoices } from '../../web/src/lib/score-names.js';

describe("monitor form's score names", () => {
  it('offers the live configs and the names seen, once each, in order', () => {
    const configs = [
      { name: 'helpfulness', archived: false },
      { name: 'tone', archived: true },
      { name: 'correctness', archived: false },
    ];
    const seen = [{ name: 'correctness' }, { name: 'latency-ok' }];
    expect(scoreNameChoices(configs, seen)).toEqual(['correctness', 'helpfulness', 'latency-ok']);
  });

  it("keeps the monitor's own name though no config or score has it (yet)", () => {
    expect(scoreNameChoices([], [{ name: 'b' }], 'not-sent-yet')).toEqual(['b', 'not-sent-yet']);
    expect(scoreNameChoices(undefined, undefined, 'tone')).toEqual(['tone']);
  });

  it('offers nothing while neither list has loaded', () => {
    expect(scoreNameChoices(undefined, undefined)).toEqual([]);
    expect(scoreNameChoices(undefined, undefined, '')).toEqual([]);
  });
});
