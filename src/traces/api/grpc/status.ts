import { Metadata, status as GrpcCode, type ServerErrorResponse } from '@grpc/grpc-js';
import type { FastifyBaseLogger } from 'fastify';
import protobuf from 'protobufjs';
import { isStoreUnavailable } from '../../../http/requests/error-handler.js';
import { AppError, type ErrorCode } from '../../../http/wire/errors.js';

/**
 * The gRPC status of each error code, as the OTLP specification reads them: INVALID_ARGUMENT
 * for data that can never succeed, UNAUTHENTICATED / PERMISSION_DENIED for credentials, and
 * RESOURCE_EXHAUSTED for limits. An exporter retries RESOURCE_EXHAUSTED only when the status
 * carries RetryInfo (a rate limit, which says when); a message over the size limit carries none,
 * so it is not sent again. UNAVAILABLE (a store down, too many exports at once) is retried.
 */
const grpcCodeOf: Record<ErrorCode, GrpcCode> = {
  VALIDATION_ERROR: GrpcCode.INVALID_ARGUMENT,
  UNAUTHORIZED: GrpcCode.UNAUTHENTICATED,
  FORBIDDEN: GrpcCode.PERMISSION_DENIED,
  NOT_FOUND: GrpcCode.NOT_FOUND,
  CONFLICT: GrpcCode.ABORTED,
  PAYLOAD_TOO_LARGE: GrpcCode.RESOURCE_EXHAUSTED,
  REQUEST_TIMEOUT: GrpcCode.DEADLINE_EXCEEDED,
  UNSUPPORTED_MEDIA_TYPE: GrpcCode.INVALID_ARGUMENT,
  QUERY_TOO_EXPENSIVE: GrpcCode.RESOURCE_EXHAUSTED,
  RATE_LIMITED: GrpcCode.RESOURCE_EXHAUSTED,
  INTERNAL_ERROR: GrpcCode.INTERNAL,
  MODEL_ERROR: GrpcCode.UNAVAILABLE,
  SERVICE_UNAVAILABLE: GrpcCode.UNAVAILABLE,
};

/** google.rpc.Status with google.rpc.RetryInfo, the rich error model gRPC clients read from `grpc-status-details-bin`. */
const richStatus = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
            Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
          },
        },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            RetryInfo: { fields: { retry_delay: { type: 'google.protobuf.Duration', id: 1 } } },
          },
        },
      },
    },
  },
});
const statusType = richStatus.lookupType('google.rpc.Status');
const retryInfoType = richStatus.lookupType('google.rpc.RetryInfo');
export const retryInfoTypeUrl = 'type.googleapis.com/google.rpc.RetryInfo';

/** The `grpc-status-details-bin` value of a status that asks to be retried after `seconds`. */
function statusDetails(code: GrpcCode, message: string, seconds: number): Buffer {
  const retryInfo = retryInfoType.encode(retryInfoType.fromObject({ retry_delay: { seconds, nanos: 0 } })).finish();
  const details = statusType.fromObject({ code, message, details: [{ type_url: retryInfoTypeUrl, value: retryInfo }] });
  return Buffer.from(statusType.encode(details).finish());
}

/** For tests: the retry delay in seconds a status's details carry, if any. */
export function retryDelayOf(details: Buffer): number | undefined {
  const decoded = statusType.toObject(statusType.decode(details), { longs: Number }) as {
    details?: { type_url: string; value: Uint8Array }[];
  };
  const any = decoded.details?.find((d) => d.type_url === retryInfoTypeUrl);
  if (!any) return undefined;
  const info = retryInfoType.toObject(retryInfoType.decode(any.value), { longs: Number }) as { retry_delay?: { seconds?: number } };
  return info.retry_delay?.seconds ?? 0;
}

/**
 * The gRPC status of an error: an AppError's own message (it is meant for the client), with
 * RetryInfo when it says when to retry; a store that is down is UNAVAILABLE; anything else is
 * INTERNAL, logged here and never shown.
 */
export function grpcStatusOf(error: unknown, log: FastifyBaseLogger): ServerErrorResponse {
  let appError: AppError;
  if (error instanceof AppError) appError = error;
  else if (isStoreUnavailable(error)) {
    log.error({ err: error }, 'a store is unavailable');
    appError = new AppError('SERVICE_UNAVAILABLE', 'A data store is unavailable; retry shortly', {}, { 'retry-after': '5' });
  } else {
    log.error({ err: error }, 'OTLP/gRPC export failed');
    appError = new AppError('INTERNAL_ERROR', 'Internal error');
  }
  const code = grpcCodeOf[appError.code];
  const metadata = new Metadata();
  const retryAfter = Number(appError.headers['retry-after']);
  if (Number.isInteger(retryAfter) && retryAfter > 0) {
    metadata.set('grpc-status-details-bin', statusDetails(code, appError.message, retryAfter));
  }
  return { name: appError.code, message: appError.message, code, details: appError.message, metadata };
}
