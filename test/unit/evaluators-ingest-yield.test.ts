import { describe, expect, it } from 'vitest';
import { createIngestYield, type IngestYieldOptions } from '../../src/evaluators/service/ingest-yield.js';
import { createIngestActivity } from '../../src/traces/ingest/ingest-activity.js';

const options: IngestYieldOptions = { busyAt: 2, share: 0.1, burst: 3, maxRestMs: 5_000, busyScanPages: 1 };

/** A clock the test moves, the activity it drives, and the policy over both. */
function setup(over: Partial<IngestYieldOptions> = {}) {
  const clock = { at: 1_000_000 };
  const now = () => clock.at;
  const activity = createIngestActivity(now);
  const policy = createIngestYield(activity, { ...options, ...over }, now);
  const busy = (requests = 5) => {
    for (let i = 0; i < requests; i += 1) activity.begin()();
  };
  return { clock, activity, policy, busy };
}

describe('external ingest activity', () => {
  it('counts the requests begun in the last second, and those still storing', () => {
    const { clock, activity, busy } = setup();
    expect(activity.recentRequests()).toBe(0);
    busy(3);
    clock.at += 600;
    busy(2);
    expect(activity.recentRequests()).toBe(5);
    clock.at += 500;
    expect(activity.recentRequests()).toBe(2);
    clock.at += 600;
    expect(activity.recentRequests()).toBe(0);
    // A slow request counts until it is over, however long it takes; its end is heard once.
    const ended = activity.begin();
    clock.at += 5_000;
    expect(activity.recentRequests()).toBe(1);
    ended();
    ended();
    expect(activity.recentRequests()).toBe(0);
  });
});

describe('evaluation yields to ingest', () => {
  it('runs every lane at full speed while ingest is quiet', () => {
    const { policy, busy } = setup();
    busy(1); // below busyAt
    for (let i = 0; i < 50; i += 1) expect(policy.admit()).toBe(0);
    for (let i = 0; i < 50; i += 1) policy.finished();
    expect(policy.admit()).toBe(0);
    expect(policy.scanPages(20)).toBe(20);
  });

  it('while ingest is busy: a burst of at most `burst` jobs, then a rest of its length × (1 − share) / share', () => {
    const { clock, policy, busy } = setup();
    busy();
    expect([policy.admit(), policy.admit(), policy.admit()]).toEqual([0, 0, 0]);
    // The burst is full: the next lane waits for it to end.
    expect(policy.admit()).toBeGreaterThan(0);
    clock.at += 40;
    busy();
    policy.finished();
    policy.finished();
    expect(policy.admit()).toBeGreaterThan(0);
    clock.at += 10;
    busy();
    policy.finished();
    // A 50 ms burst at a 10% share: 450 ms of rest.
    expect(policy.admit()).toBe(450);
    clock.at += 449;
    busy();
    expect(policy.admit()).toBe(1);
    clock.at += 1;
    expect(policy.admit()).toBe(0);
    expect(policy.scanPages(20)).toBe(1);
  });

  it('a rest is bounded, and ends as soon as ingest goes quiet', () => {
    const { clock, policy, busy } = setup({ maxRestMs: 2_000 });
    busy();
    expect(policy.admit()).toBe(0);
    clock.at += 1_000;
    busy();
    policy.finished();
    expect(policy.admit()).toBe(2_000);
    // Ingest stops: a second later its rate is nothing, and evaluation runs at full speed.
    clock.at += 1_001;
    expect(policy.admit()).toBe(0);
    expect(policy.admit()).toBe(0);
    expect(policy.admit()).toBe(0);
    expect(policy.admit()).toBe(0);
    expect(policy.scanPages(20)).toBe(20);
  });

  it('jobs started at full speed belong to the burst that opens when ingest turns busy', () => {
    const { clock, policy, busy } = setup();
    expect(policy.admit()).toBe(0);
    expect(policy.admit()).toBe(0);
    busy();
    expect(policy.admit()).toBe(0);
    clock.at += 100;
    busy();
    policy.finished();
    policy.finished();
    // One job still runs: no rest yet, and the burst has room for two more.
    expect(policy.admit()).toBe(0);
    policy.finished();
    policy.finished();
    expect(policy.admit()).toBe(900);
  });
});
