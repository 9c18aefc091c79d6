import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** An incoming id is kept when it is short and plain, so it can go into logs and headers as is. */
const saneId = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && saneId.test(incoming)) return incoming;
  return randomUUID();
}
