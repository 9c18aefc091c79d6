/** The engine answers NaN (as null or "nan") for percentiles of an empty set. */
export const finiteOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * A sum as the API answers it: always a number. Only values stored before the span bounds
 * existed can overflow a 64-bit float (the engine then answers null, inf or nan); such a sum
 * reads as the largest number the format holds, never breaking the answer.
 */
export const finiteSum = (value: unknown): number => {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : Number.MAX_VALUE;
};
