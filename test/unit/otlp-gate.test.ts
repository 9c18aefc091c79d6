import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/wire/errors.js';
import { ExportGate } from '../../src/traces/ingest/otlp/export.js';

describe('ExportGate', () => {
  it('admits up to its limit, then answers 503 with Retry-After until one leaves', () => {
    const gate = new ExportGate(2);
    const first = gate.enter();
    const second = gate.enter();
    let refused: unknown;
    try {
      gate.enter();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).status).toBe(503);
    expect((refused as AppError).headers['retry-after']).toBe('1');
    first();
    first(); // leaving twice frees one place only
    const third = gate.enter();
    expect(() => gate.enter()).toThrow(AppError);
    second();
    third();
    expect(() => gate.enter()).not.toThrow();
  });
});
