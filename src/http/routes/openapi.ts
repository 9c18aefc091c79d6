import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { finishDocument, type OpenApiDocument } from '../wire/openapi-document.js';

/** Must be registered before the routes it describes. */
export async function registerOpenApi(app: FastifyInstance) {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Loupe API',
        description: 'Prompt management and AI tracing. Every response is JSON in the { data, meta } envelope; errors in { error, meta }.',
        version: '0.1.0',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          adminToken: { type: 'apiKey', in: 'header', name: 'x-admin-token' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Recursive schemas (a JSON value) are emitted as $refs to components; this adds the components.
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
  // Generated once, on the first request: the routes are all registered by then.
  let document: OpenApiDocument | undefined;
  app.get(
    '/openapi.json',
    { schema: { hide: true } },
    async () => (document ??= finishDocument(app.swagger() as unknown as OpenApiDocument)),
  );
}
