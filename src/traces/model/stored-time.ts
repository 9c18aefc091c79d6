/** ISO 8601 with any offset → 'YYYY-MM-DD hh:mm:ss.ffffff' in UTC, microseconds kept. */
const utcIso = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/;

export function toStoredTime(iso: string): string {
  // Most clients send UTC already: slice it instead of a Date round trip (two per span).
  const utc = utcIso.exec(iso);
  if (utc) return `${utc[1]} ${utc[2]}.${(utc[3] ?? '').padEnd(6, '0').slice(0, 6)}`;
  const ms = Date.parse(iso);
  const whole = new Date(Math.floor(ms / 1000) * 1000).toISOString();
  const fraction = (/\.(\d+)/.exec(iso)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return `${whole.slice(0, 10)} ${whole.slice(11, 19)}.${fraction}`;
}

/** 'YYYY-MM-DD hh:mm:ss[.ffffff]' (UTC) → ISO 8601; milliseconds unless microseconds are set. */
export function fromStoredTime(stored: string): string {
  const [date, time = '00:00:00'] = stored.split(' ');
  const [clock, fraction = ''] = time.split('.');
  const digits = fraction.padEnd(6, '0');
  const shown = digits.endsWith('000') ? digits.slice(0, 3) : digits;
  return `${date}T${clock}.${shown}Z`;
}

/** A time in its stored form ('YYYY-MM-DD hh:mm:ss[.ffffff]'), as a page cursor carries it. */
export const storedTimePattern = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$/;
