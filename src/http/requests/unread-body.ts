import type { FastifyInstance } from 'fastify';

/**
 * An answer given before the request's body has arrived (a 401 from `onRequest`, a 413 from
 * Content-Length, a 415, a 429, a 408 from the rate floor) closes the connection after it: the
 * answer says `Connection: close`, so Node ends the socket once the answer is written. Kept
 * alive instead, Node would read and discard the rest of the body for the next request's sake,
 * and a client without a key could hold the connection, and a descriptor, for as long as it
 * trickled bytes (decision 090). A body that had fully arrived leaves the connection alive.
 */
export function registerUnreadBodyClose(app: FastifyInstance) {
  app.addHook('onSend', async (request, reply) => {
    const raw = request.raw;
    // `complete` is Node's flag for a request read to its end (absent on requests made by inject).
    if (raw.complete !== false) return;
    const announced = raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;
    if (announced) reply.header('connection', 'close');
  });
}
