import { z } from 'zod';
import { monitorEventTypes } from '../../contract/monitor-metrics.js';

/** The events an endpoint can subscribe to: the prompts' own and the monitors' alerts. */
export const webhookEventTypes = ['prompt.version.created', 'prompt.label.moved', 'prompt.deleted', ...monitorEventTypes] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

export const webhookEventType = z.enum(webhookEventTypes);

export const createWebhookBody = z
  .object({
    url: z.string().max(2048).meta({ example: 'https://example.com/hooks/loupe' }),
    events: z
      .array(webhookEventType)
      .min(1)
      .max(webhookEventTypes.length)
      .refine((events) => new Set(events).size === events.length, 'must not repeat an event'),
    secret: z
      .string()
      .min(16)
      .max(200)
      .optional()
      .meta({ description: 'The signing secret; when absent one is generated and answered once' }),
  })
  .strict();
export type CreateWebhook = z.infer<typeof createWebhookBody>;

export const webhookSchema = z.object({
  id: z.string().uuid(),
  url: z.string(),
  events: z.array(webhookEventType),
  status: z.enum(['active', 'failing']).meta({ description: '"failing" after repeated failed attempts; a success makes it active again' }),
  consecutiveFailures: z.number().int(),
  workspaceId: z.string().uuid(),
  createdAt: z.string(),
});
export type Webhook = z.infer<typeof webhookSchema>;

/** Only the answer to the creation carries the secret. */
export const createdWebhookSchema = webhookSchema.extend({
  secret: z.string().meta({ description: 'Shown once: keep it to check X-Loupe-Signature' }),
});

export const webhookIdParams = z.object({ id: z.string().uuid() });

export const deliveriesQuery = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();
export type DeliveriesQuery = z.infer<typeof deliveriesQuery>;

export const deliverySchema = z.object({
  id: z.string().uuid(),
  eventId: z.string().uuid(),
  eventType: webhookEventType,
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  lastResponseExcerpt: z.string().nullable().meta({ description: 'At most the first 512 bytes of the last answer' }),
  lastAttemptAt: z.string().nullable(),
  nextAttemptAt: z.string().nullable().meta({ description: 'When the next attempt is due; null once delivered or failed' }),
  deliveredAt: z.string().nullable(),
  createdAt: z.string(),
});
export type Delivery = z.infer<typeof deliverySchema>;

export const deletedWebhookSchema = z.object({ id: z.string().uuid() });
