/** Times as the score table stores them: 'YYYY-MM-DD hh:mm:ss.ffffff' in UTC, to and from ISO 8601. */

export function toStoredTime(iso: string): string {
  const ms = Date.parse(iso);
  const whole = new Date(Math.floor(ms / 1000) * 1000).toISOString();
  // The fraction as written (up to microseconds), which a Date round trip would cut to milliseconds.
  const fraction = (/T\d\d:\d\d:\d\d\.(\d+)/.exec(iso)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return `${whole.slice(0, 10)} ${whole.slice(11, 19)}.${fraction}`;
}

/** Stored time → ISO 8601 with milliseconds, or microseconds when it has them. */
export function fromStoredTime(stored: string): string {
  const [date, time = '00:00:00.000000'] = stored.split(' ');
  const [clock, fraction = '000000'] = time.split('.');
  const shown = fraction.slice(3) === '000' ? fraction.slice(0, 3) : fraction;
  return `${date}T${clock}.${shown}Z`;
}
