import { describe, expect, it } from 'vitest';
import { basicSecret } from '../../src/tenancy/service/auth.js';

const encode = (text: string) => Buffer.from(text).toString('base64');

describe('basicSecret (Langfuse SDK credentials)', () => {
  it('takes the part after the first colon as the secret', () => {
    expect(basicSecret(encode('pk-lf-1:lk_abc'))).toBe('lk_abc');
    expect(basicSecret(encode(':lk_abc'))).toBe('lk_abc');
    expect(basicSecret(encode('pk:lk:with:colons'))).toBe('lk:with:colons');
  });
  it('has no secret without a colon or with an empty secret', () => {
    expect(basicSecret(encode('only-public'))).toBeUndefined();
    expect(basicSecret(encode('pk-lf-1:'))).toBeUndefined();
    expect(basicSecret('')).toBeUndefined();
  });
});
