import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

/** Selects spans by instrumentation scope and raw attribute values (a list: any of them). */
export interface SpanRule {
  scope?: string;
  name?: string;
  attr?: Record<string, string | string[]>;
}

/** A call's facts that differ from the script's defaults (case.json `override`). */
export interface RoleOverride {
  models?: string[];
  /** Input, output, total; null: the library sends none. */
  tokens?: [number, number, number] | null;
  priced?: boolean;
  input?: [string, string][];
  systemOptional?: boolean;
  answer?: string;
  answerTextOk?: boolean;
  cacheTokens?: { read: number; write: number };
  costUsd?: number;
  toolCall?: { id: string; name: string; arguments: Record<string, unknown> };
  toolCallId?: string;
  toolCallIdAbsent?: boolean;
  kinds?: string[];
  inputAbsent?: boolean;
  outputToolCallAbsent?: boolean;
  statusOk?: boolean;
}

/** The facts a user expects of a case (its case.json). */
export interface CaseFacts {
  name: string;
  traceId: string;
  spanCount: number;
  rootName: string;
  rootKinds: string[];
  trace: { sessionId: string | null; userId: string | null; environment: string | null; service: string | null };
  gen: SpanRule;
  wrapper?: SpanRule;
  tool: SpanRule;
  roles: string[];
  override?: Record<string, RoleOverride>;
  contentCaptured?: boolean;
  ttft: boolean;
  /** Where the stream's first-token time is: the generation span (default) or its child. */
  ttftSpan?: 'child';
  provider: boolean;
  providerName?: string;
  embedInput: boolean;
  errorCount: number;
  failedCalls?: number;
  totals: [number, number, number];
  altTotals?: [number, number, number][];
  rootIO?: { input: string; output: string };
  logsBothOrders?: boolean;
}

/** The cases that carry their facts as data (case.json), by folder name. */
export function casesWithFacts(): CaseFacts[] {
  return readdirSync(corpusDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(corpusDir, d.name, 'case.json')))
    .map((d) => JSON.parse(readFileSync(path.join(corpusDir, d.name, 'case.json'), 'utf8')) as CaseFacts)
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface RawSpan {
  scope: string;
  name: string;
  attributes: Record<string, string>;
}

/** AnyValue of a decoded request as text (protobuf JSON or OTLP/JSON), for matching rules. */
function anyText(value: Record<string, unknown> | undefined): string {
  if (!value) return '';
  const [inner] = Object.values(value);
  return typeof inner === 'string' ? inner : JSON.stringify(inner);
}

/** The spans of a case as sent, by hex span id: scope, name and attribute values as text. */
export function corpusRawSpans(caseName: string): Map<string, RawSpan> {
  const dir = path.join(corpusDir, caseName);
  const spans = new Map<string, RawSpan>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.decoded.json'))) {
    const decoded = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
      resourceSpans?: {
        scopeSpans?: {
          scope?: { name?: string };
          spans?: { spanId: string; name: string; attributes?: { key: string; value: Record<string, unknown> }[] }[];
        }[];
      }[];
    };
    for (const rs of decoded.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? []) {
          const id = /^[0-9a-f]{16}$/.test(s.spanId) ? s.spanId : Buffer.from(s.spanId, 'base64').toString('hex');
          const attributes: Record<string, string> = {};
          for (const a of s.attributes ?? []) attributes[a.key] = anyText(a.value);
          spans.set(id, { scope: ss.scope?.name ?? '', name: s.name, attributes });
        }
  }
  return spans;
}

export function matchesRule(span: RawSpan | undefined, rule: SpanRule): boolean {
  if (!span) return false;
  if (rule.scope !== undefined && span.scope !== rule.scope) return false;
  if (rule.name !== undefined && span.name !== rule.name) return false;
  for (const [key, want] of Object.entries(rule.attr ?? {})) {
    const values = Array.isArray(want) ? want : [want];
    if (!values.includes(span.attributes[key] ?? '')) return false;
  }
  return true;
}
