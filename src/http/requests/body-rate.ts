import { Transform, type TransformCallback } from 'node:stream';
import { AppError } from '../wire/errors.js';

export interface BodyRateFloor {
  /** Bytes a second the body must average over each window; 0 turns the floor off. */
  minBytesPerSecond: number;
  windowMs: number;
}

/**
 * Passes a request body through, counting its bytes as they arrive from the socket, and fails
 * it with 408 when a whole window goes by with fewer than `minBytesPerSecond × window` new
 * bytes: a client trickling a body (2 bytes every 5 s) cannot hold a connection and its
 * descriptor for as long as it likes. The window restarts each time; a fast start buys no
 * credit for a later trickle. `receivedEncodedLength` tells fastify how many bytes came in,
 * which it checks against Content-Length (a later stage may change the count, as gzip does).
 */
export class RateFlooredBody extends Transform {
  receivedEncodedLength = 0;
  private windowStart = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly floor: BodyRateFloor) {
    super();
    const due = (floor.minBytesPerSecond * floor.windowMs) / 1000;
    let checkedAt = Date.now();
    this.timer = setInterval(() => {
      const now = Date.now();
      const late = now - checkedAt - floor.windowMs;
      checkedAt = now;
      const received = this.receivedEncodedLength - this.windowStart;
      this.windowStart = this.receivedEncodedLength;
      // A window the service itself stalled in (its event loop busy past half a window) proves
      // nothing about the client: the bytes may be waiting unread. It is not judged.
      if (late > floor.windowMs / 2 || received >= due) return;
      this.destroy(
        new AppError(
          'REQUEST_TIMEOUT',
          `The request body arrived slower than ${floor.minBytesPerSecond} bytes a second (${received} bytes in ${floor.windowMs} ms)`,
          { minBytesPerSecond: floor.minBytesPerSecond, windowMs: floor.windowMs, receivedBytes: received },
        ),
      );
    }, floor.windowMs);
    this.timer.unref();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    this.receivedEncodedLength += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback) {
    clearInterval(this.timer);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    clearInterval(this.timer);
    callback(error);
  }
}
