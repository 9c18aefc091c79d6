import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

/**
 * Timestamps come from the monotonic clock anchored once to the wall clock, so a span's
 * start, end and duration agree with each other even if the system clock is stepped
 * while it runs, and carry microseconds.
 */
const wallAnchorMs = Date.now();
const monoAnchorMs = performance.now();

/** Monotonic milliseconds, for durations. */
export function monotonicMs(): number {
  return performance.now();
}

/** ISO 8601 with microseconds of a monotonic reading. */
export function isoAt(monoMs: number): string {
  const epochMs = wallAnchorMs + (monoMs - monoAnchorMs);
  const wholeMs = Math.floor(epochMs);
  const micros = Math.floor((epochMs - wholeMs) * 1000);
  return new Date(wholeMs).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}

export function nowIso(): string {
  return isoAt(monotonicMs());
}

function nonZeroHex(bytes: number): string {
  // An all-zero id is invalid in W3C trace context; draw again in that (unlikely) case.
  for (;;) {
    const hex = randomBytes(bytes).toString('hex');
    if (/[^0]/.test(hex)) return hex;
  }
}

/** 32 lowercase hex characters. */
export const newTraceId = () => nonZeroHex(16);
/** 16 lowercase hex characters. */
export const newSpanId = () => nonZeroHex(8);
