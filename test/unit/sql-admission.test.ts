import { describe, expect, it } from 'vitest';
import { SqlAdmission } from '../../src/sql/admission.js';
import { AppError } from '../../src/http/wire/errors.js';

const limits = { perOrganization: 2, total: 3, maxWaitMs: 10_000, maxWaitingPerOrganization: 4 };

/** Resolves the admission's promise state without waiting on it. */
async function settled<T>(promise: Promise<T>): Promise<'pending' | 'admitted' | 'refused'> {
  const marker = Symbol('pending');
  const outcome = await Promise.race([
    promise.then(
      () => 'admitted' as const,
      () => 'refused' as const,
    ),
    new Promise<typeof marker>((resolve) => setImmediate(() => resolve(marker))),
  ]);
  return outcome === marker ? 'pending' : outcome;
}

describe('SQL admission', () => {
  it('admits up to the per-organization and total bounds, then queues', async () => {
    const admission = new SqlAdmission(limits);
    const a1 = await admission.admit('a');
    await admission.admit('a');
    const a3 = admission.admit('a');
    expect(await settled(a3)).toBe('pending');
    // Another organization still has a place: one organization's queue never blocks it.
    const b1 = await admission.admit('b');
    expect(admission.running).toBe(3);
    const b2 = admission.admit('b');
    expect(await settled(b2)).toBe('pending');
    a1();
    a1(); // a release counts once
    expect(await settled(a3)).toBe('admitted');
    expect(await settled(b2)).toBe('pending');
    b1();
    expect(await settled(b2)).toBe('admitted');
    expect(admission.running).toBe(3);
  });

  it('takes the organizations in turn when places free', async () => {
    const admission = new SqlAdmission({ ...limits, perOrganization: 3, total: 3 });
    const held = [await admission.admit('a'), await admission.admit('a'), await admission.admit('a')];
    const order: string[] = [];
    const waits = [
      admission.admit('a').then((r) => (order.push('a1'), r)),
      admission.admit('a').then((r) => (order.push('a2'), r)),
      admission.admit('b').then((r) => (order.push('b1'), r)),
      admission.admit('c').then((r) => (order.push('c1'), r)),
    ];
    for (const release of held) {
      release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(waits.slice(0, 1).concat(waits.slice(2)));
    // 'a' came first and gets the first place; then b and c before a's second query.
    expect(order).toEqual(['a1', 'b1', 'c1']);
    (await waits[0]!)();
    expect(await waits[1]!).toBeTypeOf('function');
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2']);
  });

  it('answers 429 with Retry-After past the wait, and at once past the waiting bound', async () => {
    const admission = new SqlAdmission({ ...limits, perOrganization: 1, maxWaitMs: 30, maxWaitingPerOrganization: 1 });
    await admission.admit('a');
    const waiting = admission.admit('a');
    const refusedAtOnce = await admission.admit('a').catch((error: unknown) => error);
    expect(refusedAtOnce).toBeInstanceOf(AppError);
    const error = (await waiting.catch((e: unknown) => e)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.status).toBe(429);
    expect(error.details).toMatchObject({ limit: 'concurrency', variable: 'LOUPE_SQL_MAX_CONCURRENT', value: 1 });
    expect(error.headers).toMatchObject({ 'retry-after': '1' });
  });

  it('lets a waiting query whose client left go, and gives its place to the next', async () => {
    const admission = new SqlAdmission({ ...limits, perOrganization: 1 });
    const first = await admission.admit('a');
    const gone = new AbortController();
    const left = admission.admit('a', gone.signal);
    const next = admission.admit('a');
    gone.abort(new Error('gone'));
    expect(await settled(left)).toBe('refused');
    first();
    expect(await settled(next)).toBe('admitted');
  });
});
