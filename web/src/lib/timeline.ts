/** Waterfall maths: where a span's bar sits on its trace's time axis, and the axis' ticks. Pure. */

export interface TimedSpan {
  startTime: string;
  endTime: string;
  durationMs: number;
}

export interface Bounds {
  start: number;
  end: number;
  /** end - start, at least 1 ms so a trace of instant spans still has an axis. */
  duration: number;
}

export function traceBounds(spans: readonly TimedSpan[]): Bounds {
  let start = Infinity;
  let end = -Infinity;
  for (const span of spans) {
    const s = Date.parse(span.startTime);
    const e = Math.max(Date.parse(span.endTime), s + (span.durationMs || 0));
    if (s < start) start = s;
    if (e > end) end = e;
  }
  if (!Number.isFinite(start)) return { start: 0, end: 1, duration: 1 };
  return { start, end, duration: Math.max(1, end - start) };
}

/** Left offset and width as fractions of the axis; a bar is never thinner than `minWidth`. */
export function barGeometry(span: TimedSpan, bounds: Bounds, minWidth = 0.002): { left: number; width: number } {
  const s = Date.parse(span.startTime);
  const duration = Math.max(0, span.durationMs || Date.parse(span.endTime) - s);
  const left = Math.min(1, Math.max(0, (s - bounds.start) / bounds.duration));
  const width = Math.max(minWidth, Math.min(1 - left, duration / bounds.duration));
  return { left: Math.min(left, 1 - minWidth), width };
}

/** A 1-2-5 step that gives about `target` ticks across `duration` ms. */
export function tickStep(duration: number, target = 5): number {
  const raw = Math.max(duration, 1) / Math.max(1, target);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

export function ticks(duration: number, target = 5): number[] {
  const step = tickStep(duration, target);
  const out: number[] = [];
  for (let t = 0; t <= duration + step * 1e-9; t += step) out.push(Math.round(t * 1000) / 1000);
  return out;
}

/** 850 ms, 1.25 s, 2 m 5 s: the durations of spans and traces. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms === 0) return '0 ms';
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} m ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} m`;
}
