import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rawSecurityHeaders } from './security-headers.js';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type ErrorCode, type ValidationIssue } from '../wire/errors.js';

const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'VALIDATION_ERROR',
  FST_ERR_CTP_INVALID_JSON_BODY: 'VALIDATION_ERROR',
};

/** Store failures a client can retry: connection refused, reset or timed out. */
export function isStoreUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === 'CONNECTION_CLOSED' ||
    code === 'CONNECT_TIMEOUT' ||
    code === 'CONNECTION_DESTROYED' ||
    code === 'CONNECTION_ENDED' ||
    code === '57P03' // PostgreSQL: cannot connect now (starting up or shutting down)
  );
}

function validationIssues(error: FastifyError): ValidationIssue[] {
  const context = (error as { validationContext?: string }).validationContext ?? 'body';
  return (error.validation ?? []).map((v) => {
    const pointer = v.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
    return { path: [context, pointer].filter(Boolean).join('.'), message: v.message ?? 'is invalid' };
  });
}

/**
 * ClickHouse's answers to a statement that hit its per-query limits (the SETTINGS of
 * src/traces/model/query-limits.ts): the client can narrow the query, so it is told how; never a 500.
 */
const queryLimitTypes: Record<string, 'memory' | 'time' | 'size'> = {
  MEMORY_LIMIT_EXCEEDED: 'memory',
  TIMEOUT_EXCEEDED: 'time',
  TOO_SLOW: 'time',
  TOO_MANY_ROWS: 'size',
  TOO_MANY_BYTES: 'size',
  TOO_MANY_ROWS_OR_BYTES: 'size',
};
const queryLimitCodes: Record<string, string> = {
  '241': 'MEMORY_LIMIT_EXCEEDED',
  '159': 'TIMEOUT_EXCEEDED',
  '160': 'TOO_SLOW',
  '158': 'TOO_MANY_ROWS',
  '307': 'TOO_MANY_BYTES',
  '396': 'TOO_MANY_ROWS_OR_BYTES',
};

export function queryTooExpensive(error: unknown): AppError | undefined {
  const { type, code } = error as { type?: unknown; code?: unknown };
  const name = typeof type === 'string' && type in queryLimitTypes ? type : typeof code === 'string' ? queryLimitCodes[code] : undefined;
  if (name === undefined || (error as Error)?.constructor?.name !== 'ClickHouseError') return undefined;
  const limit = queryLimitTypes[name]!;
  const what = limit === 'memory' ? 'more memory than' : limit === 'time' ? 'more time than' : 'more data than';
  return new AppError(
    'QUERY_TOO_EXPENSIVE',
    `The query needed ${what} a query may use. Narrow it: a shorter time window (startAfter/startBefore, or from/to), ` +
      'a filter such as sessionId or userId, or a smaller limit; page with cursor instead of deep offsets.',
    { limit },
  );
}

export function toAppError(error: unknown): { appError: AppError; internal: boolean } {
  if (error instanceof AppError) return { appError: error, internal: false };
  const expensive = queryTooExpensive(error);
  if (expensive) return { appError: expensive, internal: false };
  const fastifyError = error as FastifyError;
  if (hasZodFastifySchemaValidationErrors(error) || Array.isArray(fastifyError.validation)) {
    // One message per field: the first reported, the most specific (errors.ts firstIssuePerPath).
    const seen = new Set<string>();
    const issues = validationIssues(fastifyError).filter((i) => !seen.has(i.path) && Boolean(seen.add(i.path)));
    const summary = issues
      .map((i) => `${i.path}: ${i.message}`)
      .slice(0, 3)
      .join('; ');
    return { appError: new AppError('VALIDATION_ERROR', `Invalid request: ${summary}`, { issues }), internal: false };
  }
  const mapped = fastifyError.code ? fastifyCodes[fastifyError.code] : undefined;
  if (mapped) {
    const message =
      mapped === 'PAYLOAD_TOO_LARGE'
        ? 'Request body is too large'
        : mapped === 'UNSUPPORTED_MEDIA_TYPE'
          ? `Content-Type ${fastifyError.message.replace(/^Unsupported Media Type:?\s*/i, '') || ''} is not supported`.replace(
              /\s+is/,
              ' is',
            )
          : fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'Request body is empty but Content-Type is application/json'
            : 'Request body is not valid JSON';
    return { appError: new AppError(mapped, message), internal: false };
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return { appError: new AppError('VALIDATION_ERROR', 'Request body is not valid JSON'), internal: false };
  }
  // Text PostgreSQL cannot hold (a NUL character) that no schema caught: the client's data.
  const sqlState = (error as { code?: unknown }).code;
  if (sqlState === '22021' || sqlState === '22P05') {
    return {
      appError: new AppError('VALIDATION_ERROR', 'Text must not contain the NUL character (\\u0000)', {
        issues: [{ path: 'body', message: 'must not contain the NUL character (\\u0000)' }],
      }),
      internal: false,
    };
  }
  if (isStoreUnavailable(error)) {
    return {
      appError: new AppError('SERVICE_UNAVAILABLE', 'A data store is unavailable; retry shortly', {}, { 'retry-after': '5' }),
      internal: true,
    };
  }
  const status = fastifyError.statusCode;
  if (status === 404) return { appError: new AppError('NOT_FOUND', 'Not found'), internal: false };
  if (status === 413) return { appError: new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large'), internal: false };
  if (status === 415) return { appError: new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type is not supported'), internal: false };
  if (status !== undefined && status >= 400 && status < 500) {
    return { appError: new AppError('VALIDATION_ERROR', 'Bad request'), internal: false };
  }
  // Anything else is ours: the client learns nothing of it but the request id.
  return { appError: new AppError('INTERNAL_ERROR', 'Internal server error'), internal: true };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, appError: AppError) {
  for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
  return reply.code(appError.status).send({
    error: { code: appError.code, message: appError.message, details: appError.details },
    meta: { requestId: request.id },
  });
}

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error, request, reply) => {
    const { appError, internal } = toAppError(error);
    if (internal) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: appError.code, message: appError.message }, 'request rejected');
    return sendError(request, reply, appError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new AppError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`, {
        method: request.method,
      }),
    ),
  );
}

const clientErrorAnswers: Record<string, { status: string; code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: '431 Request Header Fields Too Large',
    code: 'PAYLOAD_TOO_LARGE',
    message: 'Request headers are too large',
  },
  // Node's headers and request timeouts (LOUPE_HEADERS_TIMEOUT_MS, LOUPE_REQUEST_TIMEOUT_MS).
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: '408 Request Timeout',
    code: 'REQUEST_TIMEOUT',
    message: 'The request did not arrive in time (its headers, or the whole request with its body)',
  },
};

/**
 * A request the HTTP parser refused (a malformed request line, headers over the size limit) or
 * that did not arrive in time: answered on the socket in the envelope, with a request id and the
 * security headers, and the connection closed once the answer is written. Ended alone, the
 * socket would stay half-open for as long as the client kept its side, descriptor and all.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket) {
  // A response already under way on this socket (Node's own check, `_httpMessage`) cannot be
  // followed by another: the socket is only closed.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;
  if (!socket.writable || answering) {
    socket.destroy();
    return;
  }
  const answer = clientErrorAnswers[error.code ?? ''] ?? {
    status: '400 Bad Request',
    code: 'VALIDATION_ERROR',
    message: 'The request is not valid HTTP',
  };
  const requestId = randomUUID();
  const body = JSON.stringify({ error: { code: answer.code, message: answer.message, details: {} }, meta: { requestId } });
  const headers = { ...rawSecurityHeaders, 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId };
  socket.end(
    `HTTP/1.1 ${answer.status}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
  // A client that reads nothing may keep the answer from ever being written out: closed anyway.
  setTimeout(() => socket.destroy(), 5000).unref();
}
