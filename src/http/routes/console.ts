import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where `npm install` builds the console (web/ → web/dist). */
export const defaultConsoleDir = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/**
 * The console's own pages: client routes of the single-page app. Listed one by one (not a
 * catch-all) so an unknown /api path still answers the JSON 404, and /api, /healthz, /docs and
 * /openapi.json can never be shadowed.
 */
export const consolePages = [
  '/',
  '/sign-in',
  '/traces',
  '/traces/:traceId',
  '/sessions',
  '/sessions/:sessionId',
  '/users',
  '/users/:userId',
  '/dashboard',
  '/prompts',
  '/prompts/:name',
  '/datasets',
  '/datasets/:datasetId',
  '/datasets/:datasetId/runs/:runId',
  '/datasets/:datasetId/compare',
  '/settings/scores',
  '/evaluators',
  '/evaluators/:id',
  '/monitors',
  '/monitors/:id',
  '/settings/connections',
  '/settings/usage',
];

export type ConsoleRoute = 'page' | 'asset';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on the console's routes; the security headers pick their policy and caching from it. */
    console?: ConsoleRoute;
  }
}

/**
 * Serves the built console: hashed assets with a year's immutable cache, and index.html (never
 * cached, so a new build is picked up at once) for each client route. Without a build (a
 * checkout where `npm install` has not run) the API works alone and `/` answers 404.
 */
export async function registerConsole(app: FastifyInstance, dir: string = defaultConsoleDir): Promise<boolean> {
  if (!existsSync(path.join(dir, 'index.html'))) {
    app.log.warn({ dir }, 'the web console is not built (run npm install); serving the API only');
    return false;
  }
  await app.register(fastifyStatic, { root: dir, serve: false, cacheControl: false, etag: true, lastModified: false });
  for (const url of consolePages) {
    app.get(url, { schema: { hide: true }, config: { console: 'page' } }, (_request, reply) => reply.sendFile('index.html'));
  }
  app.get('/assets/*', { schema: { hide: true }, config: { console: 'asset' } }, (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    return reply.sendFile(path.posix.join('assets', file));
  });
  app.get('/favicon.svg', { schema: { hide: true }, config: { console: 'asset' } }, (_request, reply) => reply.sendFile('favicon.svg'));
  return true;
}
