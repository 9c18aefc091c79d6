import { errorEnvelopeSchema } from '../../http/wire/envelope.js';

/** The error answers every authenticated route of the feature may give: bad input, no or a refused credential. */
export const clientErrors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema };

/** Those of a route about one thing by id, which may not exist (or not in the caller's workspace). */
export const clientErrorsOrNotFound = { ...clientErrors, 404: errorEnvelopeSchema };

/** Reads over many summaries may hit the per-query limits (model/query-limits.ts). */
export const queryTooExpensiveSchema = errorEnvelopeSchema.describe(
  'QUERY_TOO_EXPENSIVE: the query hit its memory or time limit; narrow the window, add filters or lower the limit',
);
