import createClient from 'openapi-fetch';
import type { paths } from './schema';

/** The credential of this browser tab: sessionStorage only, never a URL, a cookie or a log. */
export interface Credential {
  apiKey: string;
  /** For organization and user keys (and optional for workspace keys). */
  workspaceId?: string;
  organizationId?: string;
}

const storageKey = 'loupe.credential';

export function readCredential(): Credential | null {
  try {
    const raw = sessionStorage.getItem(storageKey);
    if (!raw) return null;
    const value = JSON.parse(raw) as Credential;
    return typeof value.apiKey === 'string' && value.apiKey ? value : null;
  } catch {
    return null;
  }
}

export function writeCredential(credential: Credential | null) {
  if (credential) sessionStorage.setItem(storageKey, JSON.stringify(credential));
  else sessionStorage.removeItem(storageKey);
}

export function credentialHeaders(credential: Credential | null): Record<string, string> {
  if (!credential) return {};
  return {
    'x-api-key': credential.apiKey,
    ...(credential.workspaceId ? { 'x-workspace-id': credential.workspaceId } : {}),
    ...(credential.organizationId ? { 'x-organization-id': credential.organizationId } : {}),
  };
}

/** An answer of the API that is not a success, with what the error envelope says. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    readonly details: unknown = undefined,
    readonly retryAfter: string | undefined = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use({
  onRequest({ request }) {
    for (const [name, value] of Object.entries(credentialHeaders(readCredential()))) request.headers.set(name, value);
    return request;
  },
});

interface Envelope {
  error?: { code?: string; message?: string; details?: unknown };
  meta?: { requestId?: string };
}

export function toApiError(response: Response, body: unknown): ApiError {
  const envelope = (body ?? {}) as Envelope;
  return new ApiError(
    response.status,
    envelope.error?.code ?? `HTTP_${response.status}`,
    envelope.error?.message ?? (response.statusText || 'The request failed'),
    envelope.meta?.requestId ?? response.headers.get('x-request-id') ?? undefined,
    envelope.error?.details,
    response.headers.get('retry-after') ?? undefined,
  );
}

/** Unwraps an openapi-fetch answer: its data, or an ApiError carrying the envelope's message. */
export async function call<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await pending;
  } catch (error) {
    throw new ApiError(0, 'NETWORK_ERROR', `The service did not answer (${(error as Error).message})`, undefined);
  }
  if (result.error !== undefined || !result.response.ok) throw toApiError(result.response, result.error);
  return result.data as T;
}
