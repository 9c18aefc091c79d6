import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/wire/errors.js';
import { alone, diskFullOf, retryable } from '../../src/traces/writer/write-errors.js';

/** An engine error as the ClickHouse client gives it: a message and the error's name as `type`. */
const engineError = (type: string, message: string) => Object.assign(new Error(message), { type });

describe("the writer's reading of a failed write", () => {
  it('retries, never refuses, a write the engine failed on a part of its own (a disk that filled mid-write)', () => {
    const corrupted = engineError(
      'CORRUPTED_DATA',
      "Empty marks file '/data/store/fb8/all_10_10_1/skp_idx_idx_trace_id.cmrk4': 0, must be: 24: While executing WaitForAsyncInsert",
    );
    expect(retryable(corrupted)).toBe(true);
    // Failing alone, it is not told to the client as a payload the store refused.
    expect(alone(corrupted, true)).toBe(corrupted);
  });

  it('refuses for its data a write the engine refused alone for what it holds', () => {
    const refused = alone(engineError('TYPE_MISMATCH', 'Cannot convert'), true);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('VALIDATION_ERROR');
    expect(retryable(engineError('TYPE_MISMATCH', 'Cannot convert'))).toBe(false);
  });

  it('tells a full disk by the engine, the system or the message', () => {
    expect(diskFullOf(engineError('NOT_ENOUGH_SPACE', 'Cannot reserve 1.00 MiB, not enough space'))).toMatch(/Cannot reserve/);
    expect(diskFullOf(Object.assign(new Error('write failed'), { code: 'ENOSPC' }))).toBe('write failed');
    expect(
      diskFullOf(engineError('CANNOT_WRITE_TO_FILE_DESCRIPTOR', 'Cannot write to file, errno: 28, No space left on device')),
    ).toBeDefined();
    expect(diskFullOf(engineError('TYPE_MISMATCH', 'Cannot convert'))).toBeUndefined();
  });
});
