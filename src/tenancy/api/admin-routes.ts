import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../stores/postgres.js';
import { envelope, errorEnvelopeSchema, sendData } from '../../http/wire/envelope.js';
import { AppError } from '../../http/wire/errors.js';
import { headerValue } from '../service/auth.js';
import { guardedAuthentication } from '../service/authenticated.js';
import type { FailedAuthLimiter } from '../service/failed-auth.js';
import { secretsEqual } from '../model/keys.js';
import * as tenancy from '../service/tenants.js';
import {
  addMemberBody,
  apiKeySchema,
  createApiKeyBody,
  createdApiKeySchema,
  createOrganizationBody,
  createUserBody,
  createWorkspaceBody,
  idParams,
  listApiKeysQuery,
  membershipSchema,
  organizationParams,
  organizationSchema,
  updateOrganizationBody,
  updateUserBody,
  userSchema,
  workspaceSchema,
} from '../model/schemas.js';

const errors = {
  400: errorEnvelopeSchema,
  401: errorEnvelopeSchema,
  404: errorEnvelopeSchema,
  409: errorEnvelopeSchema,
  429: errorEnvelopeSchema,
};
const security = [{ adminToken: [] }];

/** Registered only when LOUPE_ADMIN_TOKEN is set; without it every /api/admin route answers 404. */
export const adminRoutes: FastifyPluginAsyncZod<{
  sql: Sql;
  adminToken: string;
  failedAuth?: FailedAuthLimiter | undefined;
  /** Admin routes of other features (retention), behind the same admin token. */
  featureRoutes?: FastifyPluginAsync[] | undefined;
}> = async (app, { sql, adminToken, failedAuth, featureRoutes }) => {
  app.addHook('onRequest', async (request) => {
    await guardedAuthentication(request, failedAuth, () => {
      const given = headerValue(request, 'x-admin-token');
      if (given === undefined || !secretsEqual(given, adminToken)) {
        throw new AppError('UNAUTHORIZED', 'A valid x-admin-token header is required', { reason: 'invalid_admin_token' });
      }
    });
  });

  app.post('/organizations', {
    schema: { tags: ['admin'], security, body: createOrganizationBody, response: { 201: envelope(organizationSchema), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await tenancy.createOrganization(sql, request.body), { status: 201 }),
  });

  app.patch('/organizations/:organizationId', {
    schema: {
      tags: ['admin'],
      security,
      params: organizationParams,
      body: updateOrganizationBody,
      response: { 200: envelope(organizationSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await tenancy.updateOrganization(sql, request.params.organizationId, request.body)),
  });

  app.post('/organizations/:organizationId/workspaces', {
    schema: {
      tags: ['admin'],
      security,
      params: organizationParams,
      body: createWorkspaceBody,
      response: { 201: envelope(workspaceSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await tenancy.createWorkspace(sql, request.params.organizationId, request.body.name), { status: 201 }),
  });

  app.post('/users', {
    schema: { tags: ['admin'], security, body: createUserBody, response: { 201: envelope(userSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await tenancy.createUser(sql, request.body.email, request.body.externalSubject), { status: 201 }),
  });

  app.patch('/users/:id', {
    schema: { tags: ['admin'], security, params: idParams, body: updateUserBody, response: { 200: envelope(userSchema), ...errors } },
    handler: async (request, reply) =>
      sendData(request, reply, await tenancy.setUserExternalSubject(sql, request.params.id, request.body.externalSubject)),
  });

  app.post('/organizations/:organizationId/members', {
    schema: {
      tags: ['admin'],
      security,
      params: organizationParams,
      body: addMemberBody,
      response: { 201: envelope(membershipSchema), ...errors },
    },
    handler: async (request, reply) =>
      sendData(request, reply, await tenancy.addMember(sql, request.params.organizationId, request.body.userId), { status: 201 }),
  });

  app.post('/api-keys', {
    schema: { tags: ['admin'], security, body: createApiKeyBody, response: { 201: envelope(createdApiKeySchema), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await tenancy.createApiKey(sql, request.body), { status: 201 }),
  });

  app.get('/api-keys', {
    schema: { tags: ['admin'], security, querystring: listApiKeysQuery, response: { 200: envelope(z.array(apiKeySchema)), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await tenancy.listApiKeys(sql, request.query.organizationId)),
  });

  app.delete('/api-keys/:id', {
    schema: { tags: ['admin'], security, params: idParams, response: { 200: envelope(apiKeySchema), ...errors } },
    handler: async (request, reply) => sendData(request, reply, await tenancy.revokeApiKey(sql, request.params.id)),
  });
  for (const routes of featureRoutes ?? []) await app.register(routes);
};
