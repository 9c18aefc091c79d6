/** Numbers, money and times as the console prints them. Pure. */

const integer = new Intl.NumberFormat('en-US');
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

export function formatInt(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : integer.format(Math.round(n));
}

export function formatCompact(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n < 10_000 ? integer.format(Math.round(n)) : compact.format(n);
}

/** Dollars with enough digits for a single cheap call ($0.000123) and cents for large sums. */
export function formatUsd(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n === 0) return '$0';
  const abs = Math.abs(n);
  if (abs >= 100) return `${n < 0 ? '-' : ''}$${abs.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const digits = abs >= 1 ? 3 : abs >= 0.01 ? 4 : 6;
  return `${n < 0 ? '-' : ''}$${abs.toFixed(digits).replace(/(\.\d*?[1-9])0+$|\.0+$/, '$1')}`;
}

export function formatPercent(fraction: number | null | undefined, digits = 1): string {
  return fraction === null || fraction === undefined ? '—' : `${(fraction * 100).toFixed(digits)}%`;
}

/** A figure with at most `digits` decimals and no trailing zeros (a mean, a statistic). */
export function formatDecimal(n: number | null | undefined, digits = 3): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '—' : Number(n.toFixed(digits)).toString();
}

/** A test's p-value: four decimals, or "< 0.0001". */
export function formatPValue(p: number | null | undefined): string {
  return p === null || p === undefined ? '—' : p < 0.0001 ? '< 0.0001' : formatDecimal(p, 4);
}

/** A difference with its sign: "+0.25", "-1". */
export function formatSigned(n: number | null | undefined, digits = 3): string {
  return n === null || n === undefined ? '—' : `${n > 0 ? '+' : ''}${formatDecimal(n, digits)}`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', {
    year: 'numeric',
    month: 'short',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** "3 min ago" for recent times, the date otherwise. */
export function formatRelative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 0) return formatTime(iso);
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return formatTime(iso);
}

/** datetime-local input value (local time, minutes) ↔ ISO 8601 for the API. */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}
