import type { FastifyRequest, FastifyTypeProviderDefault } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { envelope, errorEnvelopeSchema, sendData } from '../wire/envelope.js';

type App = Parameters<FastifyPluginAsyncZod>[0];

/** The errors every route of a workspace's records can answer: bad input, no or a refused credential, no such record. */
export const recordErrors = { 400: errorEnvelopeSchema, 401: errorEnvelopeSchema, 403: errorEnvelopeSchema, 404: errorEnvelopeSchema };

/** What a delete answers: the id of the record gone. */
export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });

/** Answers a route gives beyond `recordErrors`: 409 (a name taken, a record in use), 503 (a store or a key missing). */
type MoreErrors = readonly (409 | 503)[];

interface Route {
  /** The OpenAPI summary: what the route does, in a line. */
  summary: string;
  more?: MoreErrors;
}

/**
 * The list, get, create, update and delete routes of one kind of record of the caller's
 * workspace (`/`, `/:id`), declared from the feature's zod schemas and service functions: the
 * schemas validate the request, type the service's arguments and make the OpenAPI document; the
 * handler calls the one function and answers it in the envelope. A route left out is not served.
 */
export interface RecordRoutes<
  Record extends z.ZodType,
  Params extends z.ZodType<{ id: string }>,
  Create extends z.ZodType,
  Update extends z.ZodType,
  Query extends z.ZodType,
  Created extends z.ZodType,
  Deleted extends z.ZodType,
> {
  tags: string[];
  /** One record as answered. */
  record: Record;
  /** The `:id` of a record. */
  params: Params;
  /** `answer`, when a new record is answered with more than `record` (a secret shown once). */
  create?: Route & { body: Create; answer?: Created; run: (workspaceId: string, body: z.output<Create>) => Promise<z.input<Created>> };
  list?: Route & { query?: Query; run: (workspaceId: string, query: z.output<Query>) => Promise<z.input<Record>[]> };
  get?: Route & { run: (workspaceId: string, id: string) => Promise<z.input<Record>> };
  /** PATCH changes the fields sent; PUT replaces the definition. */
  update?: Route & {
    method: 'PATCH' | 'PUT';
    body: Update;
    run: (workspaceId: string, id: string, body: z.output<Update>) => Promise<z.input<Record>>;
  };
  /** `request` for what a delete must do once done (wait for a copy to follow it); `answer`, when not `deletedSchema`. */
  remove?: Route & { answer?: Deleted; run: (workspaceId: string, id: string, request: FastifyRequest) => Promise<z.input<Deleted>> };
}

const errorsWith = (more: MoreErrors = []) => ({
  ...recordErrors,
  ...Object.fromEntries(more.map((status) => [status, errorEnvelopeSchema])),
});

/** Registers the routes `routes` declares on `app` (a plugin mounted at the records' prefix). */
export function recordRoutes<
  Record extends z.ZodType,
  Params extends z.ZodType<{ id: string }>,
  Create extends z.ZodType = z.ZodNever,
  Update extends z.ZodType = z.ZodNever,
  Query extends z.ZodType = z.ZodUndefined,
  Created extends z.ZodType = Record,
  Deleted extends z.ZodType = typeof deletedSchema,
>(app: App, routes: RecordRoutes<Record, Params, Create, Update, Query, Created, Deleted>) {
  const { tags, record, params, create, list, get, update, remove } = routes;
  // The routes are declared without the zod type provider's types (its inference does not reach
  // through the generic schemas); the schemas still validate what the handlers read and shape
  // the answers, so the casts below only name the types they give.
  const router = app.withTypeProvider<FastifyTypeProviderDefault>();
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  if (create)
    router.route({
      method: 'POST',
      url: '/',
      schema: {
        tags,
        summary: create.summary,
        body: create.body,
        response: { 201: envelope(create.answer ?? record), ...errorsWith(create.more) },
      },
      handler: async (request, reply) =>
        sendData(request, reply, await create.run(request.auth.workspaceId, request.body as z.output<Create>), { status: 201 }),
    });
  if (list)
    router.route({
      method: 'GET',
      url: '/',
      schema: {
        tags,
        summary: list.summary,
        ...(list.query ? { querystring: list.query } : {}),
        response: { 200: envelope(z.array(record)), ...errorsWith(list.more) },
      },
      handler: async (request, reply) =>
        sendData(request, reply, await list.run(request.auth.workspaceId, request.query as z.output<Query>)),
    });
  if (get)
    router.route({
      method: 'GET',
      url: '/:id',
      schema: { tags, summary: get.summary, params, response: { 200: envelope(record), ...errorsWith(get.more) } },
      handler: async (request, reply) => sendData(request, reply, await get.run(request.auth.workspaceId, idOf(request))),
    });
  if (update)
    router.route({
      method: update.method,
      url: '/:id',
      schema: { tags, summary: update.summary, params, body: update.body, response: { 200: envelope(record), ...errorsWith(update.more) } },
      handler: async (request, reply) =>
        sendData(request, reply, await update.run(request.auth.workspaceId, idOf(request), request.body as z.output<Update>)),
    });
  if (remove)
    router.route({
      method: 'DELETE',
      url: '/:id',
      schema: {
        tags,
        summary: remove.summary,
        params,
        response: { 200: envelope(remove.answer ?? deletedSchema), ...errorsWith(remove.more) },
      },
      handler: async (request, reply) => sendData(request, reply, await remove.run(request.auth.workspaceId, idOf(request), request)),
    });
}

/**
 * One route on a record (or on the records) of the caller's workspace that is not one of the
 * five of `recordRoutes`: `/:id/history`, `/:id/diff`, a record's sub-records. Declared from the
 * feature's zod schemas and service function like them: the schemas validate the request and
 * make the OpenAPI document, the handler calls `run` with the workspace and the request's
 * parsed parts and answers in the envelope (with `meta`, `run` answers `{ data, meta }`).
 */
export interface RecordRoute<
  Params extends z.ZodType,
  Query extends z.ZodType,
  Body extends z.ZodType,
  Answer extends z.ZodType,
  Meta extends z.ZodRawShape | undefined,
> extends Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  params?: Params;
  query?: Query;
  body?: Body;
  /** The data answered, and the fields its `meta` carries beyond the request id and time. */
  answer: Answer;
  meta?: Meta;
  /** 201 for a record made. */
  status?: 201;
  /** The route reads what the workspace's answered writes stored (`config.readBarrier`, http/requests/read-barrier.ts). */
  readBarrier?: 'workspace';
  run: (
    workspaceId: string,
    input: { params: z.output<Params>; query: z.output<Query>; body: z.output<Body> },
    request: FastifyRequest,
  ) => Promise<Meta extends z.ZodRawShape ? { data: z.input<Answer>; meta: Record<string, unknown> } : z.input<Answer>>;
}

/** Registers the route `route` declares on `app`, under `tags`. */
export function recordRoute<
  Params extends z.ZodType = z.ZodUndefined,
  Query extends z.ZodType = z.ZodUndefined,
  Body extends z.ZodType = z.ZodUndefined,
  Answer extends z.ZodType = z.ZodUnknown,
  Meta extends z.ZodRawShape | undefined = undefined,
>(app: App, tags: string[], route: RecordRoute<Params, Query, Body, Answer, Meta>) {
  const { method, url, summary, params, query, body, answer, meta, status, more, readBarrier, run } = route;
  // Declared as recordRoutes declares its routes (see there): the schemas validate, the casts name their types.
  app.withTypeProvider<FastifyTypeProviderDefault>().route({
    method,
    url,
    ...(readBarrier ? { config: { readBarrier } } : {}),
    schema: {
      tags,
      summary,
      ...(params ? { params } : {}),
      ...(query ? { querystring: query } : {}),
      ...(body ? { body } : {}),
      response: { [status ?? 200]: envelope(answer, meta), ...errorsWith(more) },
    },
    handler: async (request, reply) => {
      const input = { params: request.params, query: request.query, body: request.body } as {
        params: z.output<Params>;
        query: z.output<Query>;
        body: z.output<Body>;
      };
      const answered = await run(request.auth.workspaceId, input, request);
      if (!meta) return sendData(request, reply, answered, { status: status ?? 200 });
      const { data, meta: extra } = answered as { data: unknown; meta: Record<string, unknown> };
      return sendData(request, reply, data, { status: status ?? 200, meta: extra });
    },
  });
}
