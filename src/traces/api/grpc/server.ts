import { Metadata, Server, ServerCredentials, type MethodDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { Http2Server } from 'node:http2';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../../http/wire/errors.js';
import type { TraceIngest } from '../../ingest/ingest.js';
import { ExportGate, exportSpans } from '../../ingest/otlp/export.js';
import { evaluationScoresOf } from '../../ingest/otlp/logs/evaluation-events.js';
import { exportLogs } from '../../ingest/otlp/export-logs.js';
import {
  decodeProtobufLogsRequest,
  decodeProtobufRequest,
  encodeProtobufLogsResponse,
  encodeProtobufResponse,
  ProtobufDecodeError,
} from '../../ingest/otlp/wire/protobuf.js';
import { grpcStatusOf } from './status.js';

export const traceExportPath = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
export const logsExportPath = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';

/**
 * A gRPC call as the service's authentication reads a request: the metadata's text entries as
 * headers (`x-api-key`, `authorization`, `x-workspace-id`, `x-organization-id`), the method's
 * path as the URL, the peer's address as the client address.
 */
export interface GrpcCaller {
  readonly headers: Readonly<Record<string, string>>;
  readonly url: string;
  readonly ip: string;
  readonly log: FastifyBaseLogger;
}

/**
 * Lets a call in (credentials, failed-attempt and rate limits, wired in src/grpc-access.ts)
 * and names the one workspace it writes to; throws an AppError to refuse it. `metadata` is
 * sent back before the answer (the RateLimit-* figures).
 */
export type AdmitCall = (caller: GrpcCaller) => Promise<AdmittedCall>;

/** Who a call was let in as: its workspace, its author (the key id or token subject), the metadata to send back. */
export interface AdmittedCall {
  workspaceId: string;
  authorId: string;
  metadata: Record<string, string>;
}

/** Stores the scores of evaluation events (evaluation-events.ts): the scores feature's, wired by the app. */
export type RecordOtelScores = (caller: { workspaceId: string; authorId: string }, scores: Record<string, unknown>[]) => Promise<void>;

export interface OtlpGrpcServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The largest message, after decompression (LOUPE_BODY_LIMIT). */
  maxMessageBytes: number;
  /** The app's ingest (src/app.ts, `traceIngest`): its writer, pricing and turns. */
  ingest: TraceIngest;
  admit: AdmitCall;
  log: FastifyBaseLogger;
  /** Evaluation events (span events and log records) become scores through it; without it they are not taken. */
  recordScores?: RecordOtelScores | undefined;
}

export interface OtlpGrpcServer {
  port: number;
  /** Stops taking calls and waits for those in flight (up to `graceMs`, then cuts them). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The HTTP/2 receive windows: per call, and per connection (the calls of one exporter share it).
 * Node's default, 64 KiB for both, makes an export of 512 spans (about 250 KiB) wait for a
 * WINDOW_UPDATE four times, each sent only when this busy thread comes round: OTLP/gRPC then
 * took 63% of OTLP/HTTP's spans per second (docs/decisions/092-otlp-grpc.md); with these, 100%
 * and more. Bounded anyway by the message size limit, which grpc-js applies as data arrives.
 */
export const streamWindowBytes = 1024 * 1024;
const connectionWindowBytes = 4 * 1024 * 1024;

/** Exports in flight on this listener before exporters are asked to come back (UNAVAILABLE). */
const maxExportsInFlight = 16;

/**
 * An Export method whose messages stay bytes: grpc-js hands the handler the (decompressed)
 * request as a Buffer and sends the Buffer it answers, so the request is decoded once, by the
 * same reader as OTLP/HTTP protobuf, after the caller is admitted.
 */
const bytesMethod = (path: string): MethodDefinition<Buffer, Buffer> => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: (message: Buffer) => message,
  requestDeserialize: (bytes: Buffer) => bytes,
  responseSerialize: (message: Buffer) => message,
  responseDeserialize: (bytes: Buffer) => bytes,
});

/** "127.0.0.1:5123" or "::1:5123" (grpc-js's peer) without the port. */
function peerAddress(peer: string): string {
  const colon = peer.lastIndexOf(':');
  return colon > 0 && /^\d+$/.test(peer.slice(colon + 1)) ? peer.slice(0, colon) : peer;
}

/**
 * Raises the receive windows of the HTTP/2 servers under a grpc-js Server, which offers no
 * option for it yet: new connections get the larger per-call window in their first SETTINGS,
 * and a larger connection window. Reaches into grpc-js's `http2Servers` (its listeners); a test
 * (test/e2e/otlp-grpc.test.ts) reads the window a client is offered, so an upgrade that moves it
 * is caught.
 */
function widenReceiveWindows(server: Server, log: FastifyBaseLogger) {
  const listeners = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(listeners instanceof Map)) {
    log.warn('OTLP/gRPC keeps the default HTTP/2 receive window: this grpc-js has no http2Servers to widen');
    return;
  }
  for (const listener of listeners.keys() as Iterable<Http2Server>) {
    listener.updateSettings({ initialWindowSize: streamWindowBytes });
    listener.on('session', (session) => session.setLocalWindowSize(connectionWindowBytes));
  }
}

function callerOf(call: ServerUnaryCall<Buffer, Buffer>, log: FastifyBaseLogger): GrpcCaller {
  const headers: Record<string, string> = {};
  // getMap keeps the first value of each key; binary (-bin) entries are no credentials.
  for (const [key, value] of Object.entries(call.metadata.getMap())) if (typeof value === 'string') headers[key] = value;
  return { headers, url: call.getPath(), ip: peerAddress(call.getPeer()), log };
}

function decoded<T>(decode: () => T, what: string): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof ProtobufDecodeError) {
      throw new AppError('VALIDATION_ERROR', error.message, { issues: [{ path: 'body', message: `is not a protobuf ${what}` }] });
    }
    throw error;
  }
}

/**
 * OTLP/gRPC: the trace and logs services' Export methods, with the same credentials, limits,
 * decoding, mapping and write path as OTLP/HTTP protobuf (api/otlp-routes.ts); gzip-compressed messages
 * are inflated by grpc-js, which refuses one that grows past `maxMessageBytes` as it inflates.
 */
export async function startOtlpGrpcServer(options: OtlpGrpcServerOptions): Promise<OtlpGrpcServer> {
  const { ingest, admit, log, recordScores } = options;
  const server = new Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    // Read by grpc-js servers from the release that takes it (grpc/grpc-node#3058); until then see widenReceiveWindows.
    'grpc-node.flow_control_window': streamWindowBytes,
    // Exporters keep one connection open; a ping now and then finds one that died quietly.
    'grpc.keepalive_time_ms': 60_000,
  });
  const gate = new ExportGate(maxExportsInFlight);

  /** Admits the call, decodes its message in an ingest turn (http/server/turns.ts), runs `work` behind the gate. */
  function exportMethod(work: (caller: AdmittedCall, bytes: Buffer, callLog: FastifyBaseLogger) => Promise<Buffer>) {
    return (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      const callLog = log.child({ grpcMethod: call.getPath() });
      const run = async () => {
        const admitted = await admit(callerOf(call, callLog));
        const metadata = new Metadata();
        for (const [key, value] of Object.entries(admitted.metadata)) metadata.set(key, value);
        call.sendMetadata(metadata);
        const leave = gate.enter();
        try {
          return await work(admitted, call.request, callLog);
        } finally {
          leave();
        }
      };
      run().then(
        (answer) => callback(null, answer),
        (error: unknown) => callback(grpcStatusOf(error, callLog)),
      );
    };
  }

  server.addService(
    { Export: bytesMethod(traceExportPath) },
    {
      Export: exportMethod(async (caller, bytes, callLog) => {
        await ingest.turns.take();
        const plain = decoded(() => decodeProtobufRequest(bytes), 'ExportTraceServiceRequest');
        const result = await exportSpans(ingest, caller.workspaceId, plain, callLog);
        const evaluations = recordScores ? evaluationScoresOf(plain) : [];
        if (evaluations.length > 0) await recordScores?.(caller, evaluations);
        return encodeProtobufResponse(result.rejected, result.errorMessage);
      }),
    },
  );
  server.addService(
    { Export: bytesMethod(logsExportPath) },
    {
      Export: exportMethod(async (caller, bytes, callLog) => {
        await ingest.turns.take();
        const plain = decoded(() => decodeProtobufLogsRequest(bytes), 'ExportLogsServiceRequest');
        const result = await exportLogs(
          ingest,
          caller.workspaceId,
          plain,
          callLog,
          recordScores && ((scores) => recordScores(caller, scores)),
        );
        return encodeProtobufLogsResponse(result.rejected, result.errorMessage);
      }),
    },
  );

  const address = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) => {
      if (!error) return resolve(bound);
      // Often a local OpenTelemetry Collector, which listens on 4317 too.
      reject(
        new Error(
          `Cannot listen for OTLP/gRPC on ${address} (${error.message}): set LOUPE_OTLP_GRPC_PORT to a free port, or 0 to serve none`,
          {
            cause: error,
          },
        ),
      );
    });
  });

  widenReceiveWindows(server, log);

  return {
    port,
    stop: (graceMs = 30_000) =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(cut);
          resolve();
        });
      }),
  };
}
