import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorEnvelopeSchema, meta, metaSchema } from '../../http/wire/envelope.js';
import { AppError } from '../../http/wire/errors.js';
import { evaluationScoresOf } from '../ingest/otlp/logs/evaluation-events.js';
import { decodeJsonLogsRequest, decodeJsonRequest, parseOtlpJson } from '../ingest/otlp/wire/json.js';
import {
  decodeProtobufLogsRequest,
  decodeProtobufRequest,
  encodeProtobufLogsResponse,
  encodeProtobufResponse,
  ProtobufDecodeError,
} from '../ingest/otlp/wire/protobuf.js';
import { ExportGate, exportSpans } from '../ingest/otlp/export.js';
import { exportLogs } from '../ingest/otlp/export-logs.js';
import type { PlainExportRequest, PlainLogsRequest } from '../ingest/otlp/wire/model.js';
import type { TraceIngest } from '../ingest/ingest.js';

type OtlpBody = { encoding: 'json'; value: unknown } | { encoding: 'protobuf'; value: Buffer };

const protobufTypes = ['application/x-protobuf', 'application/protobuf'];

export const otlpResponseSchema = z.object({
  partialSuccess: z.object({ rejectedSpans: z.number().int(), errorMessage: z.string() }).optional(),
  data: z.object({
    accepted: z.number().int(),
    rejected: z.number().int(),
    errors: z.array(z.object({ traceId: z.string(), spanId: z.string(), reason: z.string() })),
  }),
  meta: metaSchema,
});

export const otlpLogsResponseSchema = z.object({
  partialSuccess: z.object({ rejectedLogRecords: z.number().int(), errorMessage: z.string() }).optional(),
  data: z.object({
    accepted: z.number().int(),
    rejected: z.number().int(),
    /** Spans already stored that the records filled. */
    spansUpdated: z.number().int(),
    errors: z.array(z.object({ traceId: z.string(), spanId: z.string(), reason: z.string() })),
  }),
  meta: metaSchema,
});

const errors = {
  400: errorEnvelopeSchema,
  401: errorEnvelopeSchema,
  413: errorEnvelopeSchema,
  415: errorEnvelopeSchema,
  503: errorEnvelopeSchema,
};

/** Exports in flight per process before exporters are asked to retry. */
const maxExportsInFlight = 16;

/** How one signal's request is decoded from either encoding, and named in the errors. */
interface OtlpDecoders<T> {
  message: string;
  protobuf: (body: Buffer) => T;
  json: (body: unknown) => { ok: true; request: T } | { ok: false; issues: { path: string; message: string }[] };
}

const traceDecoders: OtlpDecoders<PlainExportRequest> = {
  message: 'ExportTraceServiceRequest',
  protobuf: decodeProtobufRequest,
  json: decodeJsonRequest,
};
const logsDecoders: OtlpDecoders<PlainLogsRequest> = {
  message: 'ExportLogsServiceRequest',
  protobuf: decodeProtobufLogsRequest,
  json: decodeJsonLogsRequest,
};

/** The request in a body of either encoding; a body that is not one is a 400 naming what it is not. */
function decodeBody<T extends object>(body: OtlpBody | undefined, decoders: OtlpDecoders<T>): T {
  if (body === undefined) return {} as T; // an empty protobuf body is an empty request
  if (body.encoding === 'protobuf') {
    try {
      return decoders.protobuf(body.value);
    } catch (error) {
      if (error instanceof ProtobufDecodeError) {
        throw new AppError('VALIDATION_ERROR', error.message, {
          issues: [{ path: 'body', message: `is not a protobuf ${decoders.message}` }],
        });
      }
      throw error;
    }
  }
  const decoded = decoders.json(body.value);
  if (!decoded.ok) {
    const [first] = decoded.issues;
    throw new AppError('VALIDATION_ERROR', `Body is not an OTLP/JSON ${decoders.message}: ${first?.path}: ${first?.message}`, {
      issues: decoded.issues,
    });
  }
  return decoded.request;
}

/** An export's answer in the request's encoding: JSON with the envelope's meta beside it, or a protobuf body. */
function answerExport(
  request: FastifyRequest,
  reply: FastifyReply,
  body: OtlpBody | undefined,
  answer: { json: () => Record<string, unknown>; protobuf: () => Buffer },
) {
  if (body?.encoding === 'json') return reply.code(200).send({ ...answer.json(), meta: meta(request) });
  return reply.code(200).header('content-type', 'application/x-protobuf').send(answer.protobuf());
}

/**
 * OTLP/HTTP traces receiver: an OpenTelemetry exporter needs only this URL and `x-api-key`.
 * JSON and protobuf, plain or gzip (decompressed, within the body limit, by the app's body
 * hook); the answer is an ExportTraceServiceResponse in the request's encoding.
 */
export const otlpRoutes: FastifyPluginAsyncZod<{
  ingest: TraceIngest;
  /** Stores the scores of evaluation events (evaluation-events.ts); the scores feature's, wired by the app. */
  recordScores?: (request: FastifyRequest, scores: Record<string, unknown>[]) => Promise<void>;
}> = async (app, { ingest, recordScores }) => {
  // Only these two encodings, in this scope only: anything else answers 415.
  app.removeAllContentTypeParsers();
  // Bodies are parsed and decoded in the thread's ingest turns (http/server/turns.ts).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    void ingest.turns.take().then(() => {
      try {
        done(null, { encoding: 'json', value: parseOtlpJson(text as string) } satisfies OtlpBody);
      } catch {
        done(
          new AppError('VALIDATION_ERROR', 'Request body is not valid JSON', { issues: [{ path: 'body', message: 'is not valid JSON' }] }),
          undefined,
        );
      }
    });
  });
  // A protobuf body is decoded by its route's handler, which fastify calls from `done`.
  app.addContentTypeParser(protobufTypes, { parseAs: 'buffer' }, (_request, buffer, done) => {
    void ingest.turns.take().then(() => done(null, { encoding: 'protobuf', value: buffer as Buffer } satisfies OtlpBody));
  });

  const gate = new ExportGate(maxExportsInFlight);

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body as OtlpBody | undefined;
    const plain = decodeBody(body, traceDecoders);
    const leave = gate.enter();
    try {
      const result = await exportSpans(ingest, request.auth.workspaceId, plain, request.log);
      const evaluations = recordScores ? evaluationScoresOf(plain) : [];
      if (evaluations.length > 0) await recordScores?.(request, evaluations);
      return answerExport(request, reply, body, {
        json: () => ({
          ...(result.rejected > 0 ? { partialSuccess: { rejectedSpans: result.rejected, errorMessage: result.errorMessage } } : {}),
          data: { accepted: result.accepted, rejected: result.rejected, errors: result.errors },
        }),
        protobuf: () => encodeProtobufResponse(result.rejected, result.errorMessage),
      });
    } finally {
      leave();
    }
  };

  const schema = {
    summary: 'OTLP/HTTP trace export (ExportTraceServiceRequest as application/json or application/x-protobuf, gzip or not)',
    description:
      'Answers an ExportTraceServiceResponse in the request encoding; for JSON the envelope data and meta ride beside partialSuccess. A protobuf request gets a protobuf body.',
    response: { 200: otlpResponseSchema, ...errors },
    tags: ['traces', 'otlp'],
  };
  app.post('/', { schema }, handler);
  app.post('/v1/traces', { schema }, handler);

  // GenAI content on the logs signal (log-records.ts): attached to its span, whichever comes first.
  const logsHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body as OtlpBody | undefined;
    const plain = decodeBody(body, logsDecoders);
    const leave = gate.enter();
    try {
      const result = await exportLogs(
        ingest,
        request.auth.workspaceId,
        plain,
        request.log,
        recordScores && ((scores) => recordScores(request, scores)),
      );
      return answerExport(request, reply, body, {
        json: () => ({
          ...(result.rejected > 0 ? { partialSuccess: { rejectedLogRecords: result.rejected, errorMessage: result.errorMessage } } : {}),
          data: { accepted: result.accepted, rejected: result.rejected, spansUpdated: result.spansUpdated, errors: result.errors },
        }),
        protobuf: () => encodeProtobufLogsResponse(result.rejected, result.errorMessage),
      });
    } finally {
      leave();
    }
  };
  app.post(
    '/v1/logs',
    {
      schema: {
        summary: 'OTLP/HTTP logs export: GenAI content events (gen_ai.user.message, gen_ai.choice, ...) attached to their spans',
        description:
          'Answers an ExportLogsServiceResponse in the request encoding. Records that name no span or are not GenAI content events are counted in partialSuccess and not stored.',
        response: { 200: otlpLogsResponseSchema, ...errors },
        tags: ['traces', 'otlp'],
      },
    },
    logsHandler,
  );
};
