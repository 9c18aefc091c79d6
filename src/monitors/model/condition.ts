/**
 * Whether a monitor's condition holds, from the window's value and the previous window's: pure
 * arithmetic, no I/O. `undefined` means "cannot tell" (no data): the state is left as it is.
 */
export type MonitorCondition =
  { kind: 'threshold'; direction: 'above' | 'below'; value: number } | { kind: 'change'; direction: 'above' | 'below'; percent: number };

export function conditionHolds(condition: MonitorCondition, current: number | null, previous: number | null): boolean | undefined {
  if (current === null) return undefined;
  if (condition.kind === 'threshold') {
    return condition.direction === 'above' ? current > condition.value : current < condition.value;
  }
  // A change needs a previous figure to compare with; from zero no percentage exists.
  if (previous === null || previous === 0) return undefined;
  const changePercent = ((current - previous) / Math.abs(previous)) * 100;
  return condition.direction === 'above' ? changePercent >= condition.percent : changePercent <= -condition.percent;
}
