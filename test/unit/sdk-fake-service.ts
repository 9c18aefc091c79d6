import type { FetchLike, SpanPayload, TracePayload } from '../../packages/sdk/src/index.js';

export interface RecordedCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: { traces: TracePayload[] } | undefined;
  /** The body's size in bytes as sent. */
  bytes: number;
  /** Date.now() when the call was made (fake time under fake timers). */
  at: number;
}

export type Responder = (call: RecordedCall, index: number) => Response | Promise<Response>;

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** Accepts every trace, as the service does. */
export const acceptAll: Responder = (call) =>
  json(200, { data: { accepted: call.body?.traces.length ?? 0, rejected: 0, errors: [] }, meta: {} });

/** A fetch that records each request and answers with `responder`. */
export function fakeFetch(responder: Responder = acceptAll) {
  const calls: RecordedCall[] = [];
  const fetch: FetchLike = async (url, init) => {
    const call: RecordedCall = {
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      bytes: typeof init.body === 'string' ? Buffer.byteLength(init.body) : 0,
      at: Date.now(),
    };
    calls.push(call);
    return responder(call, calls.length - 1);
  };
  const spans = (): SpanPayload[] => calls.flatMap((c) => c.body?.traces.flatMap((t) => t.spans) ?? []);
  return { fetch, calls, spans };
}
