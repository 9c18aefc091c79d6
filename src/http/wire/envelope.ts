import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';

export const metaSchema = z.object({
  requestId: z.string(),
  timestamp: z.string(),
});

export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  }),
  meta: z.object({ requestId: z.string() }),
});

/** The success envelope around a payload schema; `meta` may carry more (pagination). */
export function envelope<T extends z.ZodType, M extends z.ZodRawShape = Record<never, never>>(data: T, metaExtra?: M) {
  return z.object({
    data,
    meta: metaExtra ? metaSchema.extend(metaExtra) : metaSchema,
  });
}

export function meta(request: FastifyRequest, extra: Record<string, unknown> = {}) {
  return { requestId: request.id, timestamp: new Date().toISOString(), ...extra };
}

export function sendData<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  data: T,
  options: { status?: number; meta?: Record<string, unknown> } = {},
) {
  return reply.code(options.status ?? 200).send({ data, meta: meta(request, options.meta) });
}
