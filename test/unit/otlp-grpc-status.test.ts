import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { status as GrpcCode } from '@grpc/grpc-js';
import { AppError } from '../../src/http/wire/errors.js';
import { storeUnavailable } from '../../src/traces/writer/write-errors.js';
import { grpcStatusOf, retryDelayOf } from '../../src/traces/api/grpc/status.js';

const log = pino({ level: 'silent' });
const detailsOf = (status: ReturnType<typeof grpcStatusOf>) => status.metadata?.get('grpc-status-details-bin')[0] as Buffer | undefined;

describe('the gRPC status of an error (OTLP/gRPC)', () => {
  it.each([
    [new AppError('VALIDATION_ERROR', 'bad'), GrpcCode.INVALID_ARGUMENT],
    [new AppError('UNAUTHORIZED', 'who'), GrpcCode.UNAUTHENTICATED],
    [new AppError('FORBIDDEN', 'not yours'), GrpcCode.PERMISSION_DENIED],
    [new AppError('PAYLOAD_TOO_LARGE', 'big'), GrpcCode.RESOURCE_EXHAUSTED],
  ])('maps %s to its code, without RetryInfo: an exporter does not send it again', (error, code) => {
    const status = grpcStatusOf(error, log);
    expect(status.code).toBe(code);
    expect(status.details).toBe(error.message);
    expect(detailsOf(status)).toBeUndefined();
  });

  it('gives a rate limit RESOURCE_EXHAUSTED with RetryInfo, the only form of it an exporter retries', () => {
    const status = grpcStatusOf(new AppError('RATE_LIMITED', 'used up', {}, { 'retry-after': '17' }), log);
    expect(status.code).toBe(GrpcCode.RESOURCE_EXHAUSTED);
    expect(retryDelayOf(detailsOf(status)!)).toBe(17);
  });

  it('answers UNAVAILABLE with RetryInfo when the trace store or PostgreSQL is down', () => {
    const store = grpcStatusOf(storeUnavailable(), log);
    expect(store.code).toBe(GrpcCode.UNAVAILABLE);
    expect(retryDelayOf(detailsOf(store)!)).toBe(5);
    const postgres = grpcStatusOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), log);
    expect(postgres.code).toBe(GrpcCode.UNAVAILABLE);
    expect(postgres.details).not.toMatch(/5432/);
    expect(retryDelayOf(detailsOf(postgres)!)).toBe(5);
  });

  it('never shows an internal failure', () => {
    const status = grpcStatusOf(new Error('SELECT secret FROM somewhere'), log);
    expect(status.code).toBe(GrpcCode.INTERNAL);
    expect(status.details).toBe('Internal error');
  });
});
