import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Tenant } from './app.js';

/**
 * Replays a case of the OTLP corpus (the exact requests real instrumentations sent, one folder
 * per case: NNN.body raw bytes, NNN.meta.json path and headers) through the HTTP routes, with
 * each request's content type and encoding, and a real credential where the recording had a
 * redacted one (x-api-key, or Basic for the Langfuse SDK).
 */
export const corpusDir = process.env.LOUPE_OTLP_CORPUS ?? path.resolve(import.meta.dirname, '../../../shared/otlp-corpus');

interface Meta {
  method: string;
  path: string;
  headers: Record<string, string>;
  contentType: string;
  contentEncoding: string | null;
}

export function corpusRequests(caseName: string) {
  const dir = path.join(corpusDir, caseName);
  return readdirSync(dir)
    .filter((f) => /^\d{3}\.body$/.test(f))
    .sort()
    .map((file) => {
      const stem = file.slice(0, 3);
      return {
        stem,
        body: readFileSync(path.join(dir, file)),
        meta: JSON.parse(readFileSync(path.join(dir, `${stem}.meta.json`), 'utf8')) as Meta,
      };
    });
}

export async function replayCase(app: FastifyInstance, tenant: Tenant, caseName: string, order?: string[]) {
  const requests = corpusRequests(caseName);
  const ordered = order ? order.map((stem) => requests.find((r) => r.stem === stem)!) : requests;
  const responses = [];
  for (const { meta, body } of ordered) {
    const headers: Record<string, string> = { 'content-type': meta.contentType };
    if (meta.contentEncoding) headers['content-encoding'] = meta.contentEncoding;
    if (meta.headers.authorization?.startsWith('Basic')) {
      headers.authorization = `Basic ${Buffer.from(`pk-lf-interop:${tenant.key}`).toString('base64')}`;
    } else headers['x-api-key'] = tenant.key;
    responses.push(await app.inject({ method: 'POST', url: meta.path, headers, payload: body }));
  }
  return responses;
}

/** The trace ids of a case, from its decoded trace requests (base64 ids in protobuf JSON). */
export function corpusTraceIds(caseName: string): string[] {
  const dir = path.join(corpusDir, caseName);
  const ids = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.decoded.json'))) {
    const decoded = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
      resourceSpans?: { scopeSpans?: { spans?: { traceId: string }[] }[] }[];
    };
    for (const rs of decoded.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          ids.add(/^[0-9a-f]{32}$/.test(s.traceId) ? s.traceId : Buffer.from(s.traceId, 'base64').toString('hex'));
  }
  return [...ids];
}
