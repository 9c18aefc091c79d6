import { z } from 'zod';

/** What the score tables' statements share: their parameters' and rows' shapes. */

export const workspaceId = z.string().min(1);

/** An engine DateTime64(6) as text: 'YYYY-MM-DD hh:mm:ss.ffffff' (UTC). */
export const storedTime = z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);

/** Per key (a trace, session, user or group) and score name: the count and mean of the live scores. */
export const averageRow = z.object({ key: z.string(), name: z.string(), n: z.coerce.number(), mean: z.number() });
