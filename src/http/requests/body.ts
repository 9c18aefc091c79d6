import { Transform, type TransformCallback } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../wire/errors.js';
import { RateFlooredBody, type BodyRateFloor } from './body-rate.js';

/**
 * Counts decompressed bytes and stops at the limit, so a small gzip bomb fails fast with 413
 * instead of filling memory. `receivedEncodedLength` tells fastify how many compressed bytes
 * arrived, which it checks against Content-Length.
 */
class LimitedInflate extends Transform {
  receivedEncodedLength = 0;
  private inflated = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    this.inflated += chunk.length;
    if (this.inflated > this.limit) {
      callback(
        new AppError('PAYLOAD_TOO_LARGE', `Request body is larger than ${this.limit} bytes after decompression`, {
          limitBytes: this.limit,
        }),
      );
      return;
    }
    callback(null, chunk);
  }
}

/** Whether fastify will read a body for this request: a method that takes one, and a body announced. */
function announcesBody(method: string, headers: Record<string, string | string[] | undefined>): boolean {
  if (method === 'GET' || method === 'HEAD') return false;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = Number(headers['content-length']);
  return Number.isFinite(length) && length > 0;
}

/**
 * Request bodies on their way to the parser: held to the rate floor (body-rate.ts), then
 * gzip- or deflate-decoded when their Content-Encoding says so, bounded after decompression.
 */
export function registerBodyDecoding(app: FastifyInstance, limit: number, floor: BodyRateFloor) {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const encoding = String(request.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    const decoded = encoding === 'identity' || encoding === '';
    if (!decoded && encoding !== 'gzip' && encoding !== 'deflate' && encoding !== 'x-gzip') {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding} is not supported; use gzip, deflate or none`, {
        contentEncoding: encoding,
      });
    }
    let body = payload;
    if (floor.minBytesPerSecond > 0 && announcesBody(request.method, request.headers)) {
      const floored = new RateFlooredBody(floor);
      // The parser listens once it reads; until then a cut body must not throw unheard.
      floored.on('error', () => {});
      payload.on('error', (error) => floored.destroy(error)); // a client that went away: the parser hears of it
      payload.pipe(floored);
      body = floored;
    }
    if (decoded) return body;
    const inflate = encoding === 'deflate' ? createInflate() : createGunzip();
    const limited = new LimitedInflate(limit);
    body.on('data', (chunk: Buffer) => {
      limited.receivedEncodedLength += chunk.length;
    });
    const fail = (error: Error) => {
      limited.destroy(error instanceof AppError ? error : new AppError('VALIDATION_ERROR', `Request body is not valid ${encoding} data`));
    };
    inflate.on('error', fail);
    body.on('error', fail);
    body.pipe(inflate).pipe(limited);
    return limited;
  });
}
