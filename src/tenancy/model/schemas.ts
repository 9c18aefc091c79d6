import { z } from 'zod';
import { planSchema } from '../../config.js';
import { noNulMessage, noNulPattern } from '../../http/wire/json-bounds.js';

/** PostgreSQL text holds no NUL character: refused with its path instead of failing the write. */
const name = z.string().trim().min(1).max(200).regex(noNulPattern, noNulMessage);

export const organizationSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  plan: planSchema,
  rateLimitPerMinute: z.number().int().nullable(),
  rateLimitPerDay: z.number().int().nullable(),
  createdAt: z.string(),
});
export type Organization = z.infer<typeof organizationSchema>;

export const createOrganizationBody = z
  .object({
    name,
    plan: planSchema,
    rateLimitPerMinute: z.number().int().positive().max(1_000_000_000).optional(),
    rateLimitPerDay: z.number().int().positive().max(1_000_000_000).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    const custom = body.rateLimitPerMinute !== undefined || body.rateLimitPerDay !== undefined;
    if (body.plan === 'enterprise') {
      for (const field of ['rateLimitPerMinute', 'rateLimitPerDay'] as const) {
        if (body[field] === undefined) {
          ctx.addIssue({ code: 'custom', path: [field], message: 'is required for the enterprise plan' });
        }
      }
    } else if (custom) {
      ctx.addIssue({ code: 'custom', path: ['plan'], message: 'only the enterprise plan takes its own rate limits' });
    }
  });
export type CreateOrganization = z.infer<typeof createOrganizationBody>;

/** Plan and limits change together; the stored result must still satisfy the create rules. */
export const updateOrganizationBody = z
  .object({
    plan: planSchema.optional(),
    rateLimitPerMinute: z.number().int().positive().max(1_000_000_000).optional(),
    rateLimitPerDay: z.number().int().positive().max(1_000_000_000).optional(),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, { message: 'name at least one of plan, rateLimitPerMinute, rateLimitPerDay' });
export type UpdateOrganization = z.infer<typeof updateOrganizationBody>;

export const workspaceSchema = z.object({
  id: z.string().uuid(),
  organizationId: z.string().uuid(),
  name: z.string(),
  createdAt: z.string(),
});
export type Workspace = z.infer<typeof workspaceSchema>;
export const createWorkspaceBody = z.object({ name }).strict();

export const userSchema = z.object({
  id: z.string().uuid(),
  email: z.string(),
  externalSubject: z.string().nullable(),
  createdAt: z.string(),
});
export type User = z.infer<typeof userSchema>;
export const createUserBody = z
  .object({
    email: z.string().trim().toLowerCase().email().max(320),
    externalSubject: z.string().min(1).max(500).regex(noNulPattern, noNulMessage).optional(),
  })
  .strict();

export const updateUserBody = z
  .object({ externalSubject: z.string().min(1).max(500).regex(noNulPattern, noNulMessage).nullable() })
  .strict();

export const membershipSchema = z.object({ organizationId: z.string().uuid(), userId: z.string().uuid(), createdAt: z.string() });
export const addMemberBody = z.object({ userId: z.string().uuid() }).strict();

export const keyScopeSchema = z.enum(['workspace', 'organization', 'user']);
export type KeyScope = z.infer<typeof keyScopeSchema>;

export const apiKeySchema = z.object({
  id: z.string().uuid(),
  name: z.string().nullable(),
  scope: keyScopeSchema,
  organizationId: z.string().uuid(),
  workspaceId: z.string().uuid().nullable(),
  userId: z.string().uuid().nullable(),
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

/** The create answer is the only place the plaintext key ever appears. */
export const createdApiKeySchema = apiKeySchema.extend({ key: z.string() });

export const createApiKeyBody = z
  .object({
    scope: keyScopeSchema,
    organizationId: z.string().uuid(),
    workspaceId: z.string().uuid().optional(),
    userId: z.string().uuid().optional(),
    name: name.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.scope === 'workspace' && !body.workspaceId) {
      ctx.addIssue({ code: 'custom', path: ['workspaceId'], message: 'is required for a workspace-scoped key' });
    }
    if (body.scope !== 'workspace' && body.workspaceId) {
      ctx.addIssue({ code: 'custom', path: ['workspaceId'], message: 'is only for a workspace-scoped key' });
    }
    if (body.scope === 'user' && !body.userId) {
      ctx.addIssue({ code: 'custom', path: ['userId'], message: 'is required for a user-scoped key' });
    }
    if (body.scope !== 'user' && body.userId) {
      ctx.addIssue({ code: 'custom', path: ['userId'], message: 'is only for a user-scoped key' });
    }
  });
export type CreateApiKey = z.infer<typeof createApiKeyBody>;

export const listApiKeysQuery = z.object({ organizationId: z.string().uuid() }).strict();
export const idParams = z.object({ id: z.string().uuid() });
export const organizationParams = z.object({ organizationId: z.string().uuid() });
