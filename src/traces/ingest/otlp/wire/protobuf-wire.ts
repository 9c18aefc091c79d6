import { isUtf8 } from 'node:buffer';

/**
 * The protobuf wire format, read for protobuf-reader.ts: varints, fixed-size numbers and
 * length-delimited fields over one body. Anything out of the ordinary (a body cut short, an
 * unknown wire type, text that is not UTF-8) throws GiveUp: the caller then leaves the body to
 * protobufjs.
 */
export class GiveUp extends Error {}
export const giveUp = (): never => {
  throw new GiveUp();
};

export class WireReader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  uint32(): number {
    const buf = this.buf;
    let value = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= buf.length) giveUp();
      const byte = buf[this.pos++]!;
      if (shift < 32) value |= (byte & 0x7f) << shift;
      if (byte < 0x80) return value >>> 0;
      shift += 7;
    }
    return giveUp();
  }

  /** A varint int64: a number when it is exact as one, else its decimal text (as toObject's longs: String). */
  int64(): number | string {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= buf.length) giveUp();
      const byte = buf[this.pos++]!;
      if (i < 4) lo |= (byte & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (byte & 0x0f) << 28;
        hi |= (byte & 0x7f) >> 4;
      } else hi |= (byte & 0x7f) << (7 * i - 32);
      if (byte < 0x80) {
        const value = (hi | 0) * 4294967296 + (lo >>> 0);
        if (Number.isSafeInteger(value)) return value;
        return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString();
      }
    }
    return giveUp();
  }

  /** A fixed64 as decimal text (unix nanoseconds need more bits than a double holds). */
  fixed64(): string {
    if (this.pos + 8 > this.buf.length) giveUp();
    const value = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return value.toString();
  }

  fixed32(): number {
    if (this.pos + 4 > this.buf.length) giveUp();
    const value = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return value;
  }

  double(): number {
    if (this.pos + 8 > this.buf.length) giveUp();
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /** The end of the length-delimited field that starts here, within `end`. */
  limitOf(end: number): number {
    const to = this.uint32() + this.pos;
    if (to > end) giveUp();
    return to;
  }

  text(end: number): string {
    const to = this.limitOf(end);
    const from = this.pos;
    this.pos = to;
    if (to === from) return '';
    const value = this.buf.toString('utf8', from, to);
    // Text with a replacement character may be invalid UTF-8, which protobufjs refuses.
    if (value.includes('\uFFFD') && !isUtf8(this.buf.subarray(from, to))) giveUp();
    return value;
  }

  bytes(end: number): Buffer {
    const to = this.limitOf(end);
    const value = this.buf.subarray(this.pos, to);
    this.pos = to;
    return value;
  }

  /** The next tag: field number << 3 | wire type. */
  tag(): number {
    const value = this.uint32();
    if (value >>> 3 === 0) giveUp();
    return value;
  }

  /** Skips a field the schema does not name; groups and invalid wire types are protobufjs's call. */
  skip(tag: number, end: number) {
    const wire = tag & 7;
    if (wire === 0) this.uint32();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.pos = this.limitOf(end);
    else if (wire === 5) this.pos += 4;
    else giveUp();
    if (this.pos > end) giveUp();
  }

  /** Each read checks its wire type: a field the schema types otherwise is protobufjs's to judge. */
  expect(tag: number, wire: number) {
    if ((tag & 7) !== wire) giveUp();
  }

  // A field's value, its wire type checked: what each message reader reads its fields with.

  /** A string field. */
  textField(tag: number, end: number): string {
    this.expect(tag, 2);
    return this.text(end);
  }

  /** A bytes field (ids). */
  bytesField(tag: number, end: number): Buffer {
    this.expect(tag, 2);
    return this.bytes(end);
  }

  /** An embedded message: the end of its bytes. */
  messageField(tag: number, end: number): number {
    this.expect(tag, 2);
    return this.limitOf(end);
  }

  /** A fixed64 time. */
  timeField(tag: number): string {
    this.expect(tag, 1);
    return this.fixed64();
  }

  /** A uint32 count or flags: 0 is the default, absent, as protobufjs's toObject leaves it. */
  countField(tag: number): number | undefined {
    this.expect(tag, 0);
    return this.uint32() || undefined;
  }

  /** An enum (a span kind, a status code): 0 is the default, absent. */
  enumField(tag: number): number | undefined {
    this.expect(tag, 0);
    return this.uint32() | 0 || undefined;
  }

  /** A fixed32 of flags: 0 is the default, absent. */
  flagsField(tag: number): number | undefined {
    this.expect(tag, 5);
    return this.fixed32() || undefined;
  }

  /** The end of a message: it must close exactly there. */
  close(end: number) {
    if (this.pos !== end) giveUp();
  }
}
