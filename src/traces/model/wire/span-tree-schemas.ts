import { z } from 'zod';
import { idSchema, storedSpanSchema, traceListItemSchema } from '../schemas.js';
import { scoreOnTargetSchema } from '../../../contract/trace-scores.js';

/**
 * Wire shapes of a trace read in two steps, as the console reads a large trace: its tree of
 * slim spans first, then one whole span when it is selected.
 */

/**
 * A span of the tree: the span as GET /api/traces/:id returns it without what makes it heavy:
 * its payloads (input, output), free-form JSON (attributes, events, metadata), the text of its
 * status and the prices its cost was computed with. What stays is what a tree and a waterfall
 * draw and what sums and badges need.
 */
export const spanNodeSchema = storedSpanSchema.omit({
  input: true,
  output: true,
  attributes: true,
  events: true,
  droppedEvents: true,
  metadata: true,
  statusMessage: true,
  pricing: true,
});
export type SpanNode = z.infer<typeof spanNodeSchema>;

/** The trace's list item with every live span as a node, in start order; scores as in GET /api/traces/:id. */
export const traceTreeSchema = traceListItemSchema.omit({ spans: true }).extend({
  spans: z.array(spanNodeSchema.extend({ scores: z.array(scoreOnTargetSchema).optional() })),
  scores: z.array(scoreOnTargetSchema).optional(),
});
export type TraceTree = z.infer<typeof traceTreeSchema>;

export const spanParams = z.object({ id: idSchema, spanId: idSchema });
