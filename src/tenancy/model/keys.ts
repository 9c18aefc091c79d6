import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Keys look like `lpk_3fa9c1d2e4b5_<40 base62 chars>`; the first 16 characters are the visible prefix. */
const PREFIX_LENGTH = 16;
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function base62(bytes: number): string {
  let out = '';
  // Rejection sampling keeps every character equally likely.
  while (out.length < bytes) {
    for (const b of randomBytes(bytes)) {
      if (b < 248 && out.length < bytes) out += alphabet[b % 62];
    }
  }
  return out;
}

export function generateApiKey(): string {
  return `lpk_${randomBytes(6).toString('hex')}_${base62(40)}`;
}

export function keyPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Compares two secrets in time independent of where they differ. */
export function secretsEqual(given: string, expected: string): boolean {
  return hashesEqual(hashApiKey(given), hashApiKey(expected));
}
