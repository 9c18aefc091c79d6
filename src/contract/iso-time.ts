import { z } from 'zod';

/** Years the trace store's DateTime64 and retention TTL can hold without clamping. */
export const isoTimeSchema = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone (Z or ±hh:mm)' })
  // `abort`: a value that is no date-time gets that one message, not a year message too.
  .refine(
    (v) => {
      const year = new Date(Date.parse(v)).getUTCFullYear();
      return year >= 1970 && year < 2100;
    },
    { message: 'must be between the years 1970 and 2099', abort: true },
  )
  .meta({ description: 'ISO 8601 date-time with Z or an offset, years 1970 to 2099' });
