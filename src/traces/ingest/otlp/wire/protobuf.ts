import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonProblem } from '../../../../http/wire/json-bounds.js';
import { maxOtlpJsonDepth } from './json.js';
import protobuf from 'protobufjs';
import type { PlainExportRequest, PlainLogsRequest } from './model.js';
import { readExportRequest } from './protobuf-reader.js';

/** The opentelemetry-proto files as upstream publishes them (vendor/README.md gives the version). */
const protoDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'vendor');

/** The OTLP trace and logs messages, loaded once from the vendored .proto files. */
function loadSchema() {
  const root = new protobuf.Root();
  // The files import each other by their path from the repository's root (`opentelemetry/proto/...`).
  root.resolvePath = (_origin, target) => path.join(protoDir, target);
  root.loadSync(['opentelemetry/proto/collector/trace/v1/trace_service.proto', 'opentelemetry/proto/collector/logs/v1/logs_service.proto']);
  root.resolveAll();
  return {
    request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    logsRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
    logsResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
  };
}

const schema = loadSchema();

// int64/fixed64 as decimal strings: unix nanoseconds need 61 bits, more than a double holds.
// Bytes stay Uint8Array (ids become hex later); defaults are left out, as in OTLP/JSON.
const toObjectOptions: protobuf.IConversionOptions = { longs: String, enums: Number, defaults: false, arrays: false };

export class ProtobufDecodeError extends Error {}

export function decodeProtobufRequest(body: Buffer): PlainExportRequest {
  // The direct reader takes every ordinary request; anything else is protobufjs's to decode or refuse.
  return readExportRequest(body, maxOtlpJsonDepth) ?? decodeWithProtobufjs(body);
}

/** The request decoded by protobufjs and converted to plain objects: the reference the direct reader follows. */
export function decodeWithProtobufjs(body: Buffer): PlainExportRequest {
  let message: protobuf.Message;
  try {
    message = schema.request.decode(body);
  } catch (error) {
    throw new ProtobufDecodeError(`Body is not a protobuf ExportTraceServiceRequest: ${(error as Error).message}`);
  }
  try {
    const plain = schema.request.toObject(message, toObjectOptions);
    // The same bound as OTLP/JSON (json.ts), before the mapping recurses into the values.
    const tooDeep = jsonProblem(plain, { maxDepth: maxOtlpJsonDepth });
    if (tooDeep)
      throw new ProtobufDecodeError(`Body is not a usable ExportTraceServiceRequest: ${tooDeep.path.join('.')} ${tooDeep.message}`);
    return plain;
  } catch (error) {
    // Values nested deeper than the stack holds: the payload can never succeed.
    if (error instanceof RangeError) throw new ProtobufDecodeError('Body is not a usable ExportTraceServiceRequest: values nest too deep');
    throw error;
  }
}

export function encodeProtobufResponse(rejectedSpans: number, errorMessage: string | undefined): Buffer {
  // Full success leaves partial_success unset, as the OTLP specification asks.
  const payload = rejectedSpans > 0 ? { partialSuccess: { rejectedSpans, errorMessage: errorMessage ?? '' } } : {};
  return Buffer.from(schema.response.encode(schema.response.fromObject(payload)).finish());
}

/** For tests and the benchmark: the request as an OTLP exporter would encode it. */
export function encodeProtobufRequest(request: unknown): Buffer {
  return Buffer.from(schema.request.encode(schema.request.fromObject(request as Record<string, unknown>)).finish());
}

export function decodeProtobufResponse(body: Uint8Array) {
  return schema.response.toObject(schema.response.decode(body), { longs: Number }) as {
    partialSuccess?: { rejectedSpans?: number; errorMessage?: string };
  };
}

export function decodeProtobufLogsRequest(body: Buffer): PlainLogsRequest {
  let message: protobuf.Message;
  try {
    message = schema.logsRequest.decode(body);
  } catch (error) {
    throw new ProtobufDecodeError(`Body is not a protobuf ExportLogsServiceRequest: ${(error as Error).message}`);
  }
  return schema.logsRequest.toObject(message, toObjectOptions);
}

export function encodeProtobufLogsResponse(rejectedLogRecords: number, errorMessage: string | undefined): Buffer {
  const payload = rejectedLogRecords > 0 ? { partialSuccess: { rejectedLogRecords, errorMessage: errorMessage ?? '' } } : {};
  return Buffer.from(schema.logsResponse.encode(schema.logsResponse.fromObject(payload)).finish());
}

/** For tests: a logs request as an OTLP exporter would encode it. */
export function encodeProtobufLogsRequest(request: unknown): Buffer {
  return Buffer.from(schema.logsRequest.encode(schema.logsRequest.fromObject(request as Record<string, unknown>)).finish());
}
