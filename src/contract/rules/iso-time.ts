import { z } from 'zod';

/**
 * Whether an ISO 8601 date-time (already matched by `z.iso.datetime`) falls in the years 1970 to
 * 2099 in UTC. A written year from 1971 to 2098 does whatever its offset (at most ±23:59), so
 * only the edge years are parsed: ingest checks two or more times per span, and the parse was
 * most of the check.
 */
export function inStoredYears(iso: string): boolean {
  const written =
    (iso.charCodeAt(0) - 48) * 1000 + (iso.charCodeAt(1) - 48) * 100 + (iso.charCodeAt(2) - 48) * 10 + (iso.charCodeAt(3) - 48);
  if (written > 1970 && written < 2099) return true;
  const year = new Date(Date.parse(iso)).getUTCFullYear();
  return year >= 1970 && year < 2100;
}

/** Years the trace store's DateTime64 and retention TTL can hold without clamping. */
export const isoTimeSchema = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone (Z or ±hh:mm)' })
  // `abort`: a value that is no date-time gets that one message, not a year message too.
  .refine(inStoredYears, { message: 'must be between the years 1970 and 2099', abort: true })
  .meta({ description: 'ISO 8601 date-time with Z or an offset, years 1970 to 2099' });
