import { describe, expect, it } from 'vitest';
import { signatureHeader, verifySignature } from '../../src/prompts/model/webhook-signature.js';
import { defaultRetryPolicy, retryDelayMs } from '../../src/prompts/service/webhook-worker.js';
import { holdingsOf } from '../../src/prompts/service/labels.js';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('signature', () => {
  it('is the hex HMAC-SHA256 of "t.body", verified within the tolerance only', () => {
    const header = signatureHeader('secret-0123456789abcdef', '{"a":1}', 1_700_000_000);
    // echo -n '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret-0123456789abcdef
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature('secret-0123456789abcdef', '{"a":1}', header, 1_700_000_100)).toBe(true);
    expect(verifySignature('secret-0123456789abcdef', '{"a":1}', header, 1_700_000_301)).toBe(false);
    expect(verifySignature('secret-0123456789abcdef', '{"a":2}', header, 1_700_000_000)).toBe(false);
    expect(verifySignature('secret-0123456789abcdef', '{"a":1}', 't=1700000000,v1=zz', 1_700_000_000)).toBe(false);
    expect(verifySignature('secret-0123456789abcdef', '{"a":1}', 'garbage', 1_700_000_000)).toBe(false);
  });
});

describe('retry policy', () => {
  it('doubles from the base up to the cap; the documented default spans about 85 minutes', () => {
    const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 500 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(policy, n))).toEqual([100, 200, 400, 500, 500]);
    const waits = Array.from({ length: defaultRetryPolicy.maxAttempts - 1 }, (_, i) => retryDelayMs(defaultRetryPolicy, i + 1));
    expect(waits).toEqual([10, 20, 40, 80, 160, 320, 640, 1280, 2560].map((s) => s * 1000));
    expect(Math.round(waits.reduce((a, b) => a + b, 0) / 60_000)).toBe(85);
  });
});

describe('label holdings', () => {
  it('turns moves into periods: each move ends the previous holder', () => {
    const by = { apiKeyId: 'k', userId: null };
    const moves = [
      { label: 'production', from: null, to: { promptId: 1, version: '1.0.0' }, movedAt: 't1', movedBy: by },
      { label: 'staging', from: null, to: { promptId: 2, version: '1.1.0' }, movedAt: 't2', movedBy: by },
      { label: 'production', from: { promptId: 1, version: '1.0.0' }, to: { promptId: 2, version: '1.1.0' }, movedAt: 't3', movedBy: by },
      { label: 'staging', from: { promptId: 2, version: '1.1.0' }, to: null, movedAt: 't4', movedBy: by },
    ];
    expect(holdingsOf(moves).map((h) => [h.label, h.version, h.heldFrom, h.heldUntil])).toEqual([
      ['production', '1.0.0', 't1', 't3'],
      ['staging', '1.1.0', 't2', 't4'],
      ['production', '1.1.0', 't3', null],
    ]);
  });
});

describe('LOUPE_WEBHOOK_ALLOW_PRIVATE', () => {
  it('is off unless "true"; other values are refused naming it', () => {
    expect(loadConfig({}).LOUPE_WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ LOUPE_WEBHOOK_ALLOW_PRIVATE: '' }).LOUPE_WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ LOUPE_WEBHOOK_ALLOW_PRIVATE: 'false' }).LOUPE_WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ LOUPE_WEBHOOK_ALLOW_PRIVATE: 'true' }).LOUPE_WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(() => loadConfig({ LOUPE_WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOUPE_WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(/LOUPE_WEBHOOK_ALLOW_PRIVATE:/);
  });
});
