import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Seals a workspace's secret (a model connection's API key) with AES-256-GCM under the
 * service's LOUPE_ENCRYPTION_KEY. A sealed value is `v1.<iv>.<tag>.<ciphertext>` in base64:
 * a fresh 12-byte IV per seal, and the tag makes any change to the stored value fail to open
 * rather than open to something else.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(hexKey: string): SecretBox {
  const key = Buffer.from(hexKey, 'hex');
  if (key.length !== 32) throw new Error('the encryption key must be 32 bytes (64 hexadecimal characters)');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

/** The only part of a key ever shown: its last 4 characters. */
export const keyTail = (key: string): string => key.slice(-4);
