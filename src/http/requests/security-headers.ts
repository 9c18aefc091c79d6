import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's policy: its own scripts, styles and API only; nothing inline, nothing from
 * elsewhere. `data:` images are the charts' exported pictures and the icon.
 */
export const consoleCsp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every response carries; the API serves JSON, the console its own files: nothing may be framed or sniffed. */
export function registerSecurityHeaders(app: FastifyInstance) {
  app.addHook('onSend', async (request, reply, payload) => {
    applySecurityHeaders(request, reply);
    return payload;
  });
}

/** Also called by the answers fastify makes before any hook can run (a bad URL, app.ts). */
export function applySecurityHeaders(request: FastifyRequest, reply: FastifyReply) {
  {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-resource-policy', 'same-origin');
    reply.header('cross-origin-opener-policy', 'same-origin');
    reply.header('x-permitted-cross-domain-policies', 'none');
    // Browsers ignore it over plain HTTP; behind TLS it keeps them from downgrading.
    reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    // The docs page runs the OpenAPI viewer's scripts and styles; everything else is data.
    const docs = request.url === '/docs' || request.url.startsWith('/docs/') || request.url.startsWith('/docs?');
    // The console's pages and assets run its own scripts and styles, never inline ones.
    const consoleRoute = reply.statusCode < 400 ? request.routeOptions?.config?.console : undefined;
    if (consoleRoute) {
      reply.header('content-security-policy', consoleCsp);
      // Assets are named by their content's hash: a new build has new names.
      reply.header('cache-control', consoleRoute === 'asset' ? 'public, max-age=31536000, immutable' : 'no-cache');
    } else if (!docs) {
      reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
      reply.header('cache-control', 'no-store');
    }
  }
}

/** The same headers as name/value pairs, for answers written on the raw socket (a malformed request). */
export const rawSecurityHeaders: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'x-permitted-cross-domain-policies': 'none',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
};
