import { Transform, type TransformCallback } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.js';

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

export function registerBodyDecoding(app: FastifyInstance, limit: number) {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const encoding = String(request.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (encoding === 'identity' || encoding === '') return payload;
    if (encoding !== 'gzip' && encoding !== 'deflate' && encoding !== 'x-gzip') {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding} is not supported; use gzip, deflate or none`, {
        contentEncoding: encoding,
      });
    }
    const inflate = encoding === 'deflate' ? createInflate() : createGunzip();
    const limited = new LimitedInflate(limit);
    payload.on('data', (chunk: Buffer) => {
      limited.receivedEncodedLength += chunk.length;
    });
    const fail = (error: Error) => {
      limited.destroy(error instanceof AppError ? error : new AppError('VALIDATION_ERROR', `Request body is not valid ${encoding} data`));
    };
    inflate.on('error', fail);
    payload.on('error', fail);
    payload.pipe(inflate).pipe(limited);
    return limited;
  });
}
