import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';

const meSchema = z.object({
  workspaceId: z.string(),
  organizationId: z.string(),
  plan: z.string(),
  principal: z.object({ kind: z.string(), scope: z.string().optional(), userId: z.string().nullable().optional() }),
  /** What the scores this credential writes carry as `authorId` (the key id or the token subject). */
  authorId: z.string(),
});

/** Tells a caller which workspace its credential resolves to: the quickest check of a new key. */
export const meRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/api/me', {
    schema: { tags: ['auth'], response: { 200: envelope(meSchema), 401: errorEnvelopeSchema } },
    handler: async (request, reply) => {
      const { workspaceId, organizationId, plan, principal } = request.auth;
      return sendData(request, reply, {
        workspaceId,
        organizationId,
        plan,
        principal:
          principal.kind === 'apiKey'
            ? { kind: principal.kind, scope: principal.scope, userId: principal.userId }
            : { kind: principal.kind, userId: principal.userId },
        authorId: principal.kind === 'apiKey' ? principal.keyId : principal.subject,
      });
    },
  });
};
