import { describe, expect, it } from 'vitest';
import { ancestorsOf, buildTree, flattenTree, treeKeyAction } from '../../web/src/lib/tree.js';
import { barGeometry, formatDuration, tickStep, ticks, traceBounds } from '../../web/src/lib/timeline.js';

const span = (spanId: string, parentSpanId: string | undefined, startMs: number, durationMs = 10) => ({
  spanId,
  ...(parentSpanId ? { parentSpanId } : {}),
  startTime: new Date(Date.UTC(2025, 0, 1) + startMs).toISOString(),
  endTime: new Date(Date.UTC(2025, 0, 1) + startMs + durationMs).toISOString(),
  durationMs,
});

describe('span tree', () => {
  const spans = [
    span('c2', 'root', 50),
    span('root', undefined, 0, 100),
    span('c1', 'root', 10),
    span('g1', 'c1', 12),
    span('orphan', 'missing', 5),
  ];
  const tree = buildTree(spans);

  it('orders children by start time and shows spans of a missing parent as roots', () => {
    const rows = flattenTree(tree, new Set());
    expect(rows.map((r) => [r.span.spanId, r.depth])).toEqual([
      ['root', 0],
      ['c1', 1],
      ['g1', 2],
      ['c2', 1],
      ['orphan', 0],
    ]);
    expect(rows[0]).toMatchObject({ hasChildren: true, expanded: true });
    expect(rows[3]).toMatchObject({ hasChildren: false, expanded: false });
  });

  it('hides the descendants of collapsed spans', () => {
    expect(flattenTree(tree, new Set(['c1'])).map((r) => r.span.spanId)).toEqual(['root', 'c1', 'c2', 'orphan']);
    expect(flattenTree(tree, new Set(['root'])).map((r) => r.span.spanId)).toEqual(['root', 'orphan']);
    expect(ancestorsOf(tree, 'g1')).toEqual(['c1', 'root']);
  });

  it('survives cycles and a 10,000-deep chain', () => {
    const cyclic = buildTree([span('a', 'b', 0), span('b', 'a', 1)]);
    expect(
      flattenTree(cyclic, new Set())
        .map((r) => r.span.spanId)
        .sort(),
    ).toEqual(['a', 'b']);
    const chain = Array.from({ length: 10_000 }, (_, i) => span(`s${i}`, i ? `s${i - 1}` : undefined, i));
    const rows = flattenTree(buildTree(chain), new Set());
    expect(rows).toHaveLength(10_000);
    expect(rows[9_999]!.depth).toBe(9_999);
  });

  it('moves through the rows with the keys of the tree pattern', () => {
    const rows = flattenTree(tree, new Set());
    expect(treeKeyAction(rows, 0, 'ArrowDown', tree.parentOf)).toEqual({ select: 1 });
    expect(treeKeyAction(rows, 4, 'ArrowDown', tree.parentOf)).toEqual({ select: 4 });
    expect(treeKeyAction(rows, 0, 'ArrowUp', tree.parentOf)).toEqual({ select: 0 });
    expect(treeKeyAction(rows, 3, 'Home', tree.parentOf)).toEqual({ select: 0 });
    expect(treeKeyAction(rows, 0, 'End', tree.parentOf)).toEqual({ select: 4 });
    expect(treeKeyAction(rows, 1, 'ArrowRight', tree.parentOf)).toEqual({ select: 2 }); // expanded: to its first child
    expect(treeKeyAction(rows, 2, 'ArrowLeft', tree.parentOf)).toEqual({ select: 1 }); // leaf: to its parent
    expect(treeKeyAction(rows, 1, 'ArrowLeft', tree.parentOf)).toEqual({ toggle: 'c1' }); // expanded: collapses
    expect(treeKeyAction(rows, 2, 'ArrowRight', tree.parentOf)).toBeNull(); // leaf
    const collapsed = flattenTree(tree, new Set(['c1']));
    expect(treeKeyAction(collapsed, 1, 'ArrowRight', tree.parentOf)).toEqual({ toggle: 'c1' }); // collapsed: expands
    expect(treeKeyAction(rows, 0, 'ArrowLeft', tree.parentOf)).toEqual({ toggle: 'root' });
    expect(treeKeyAction(rows, 4, 'ArrowLeft', tree.parentOf)).toBeNull(); // a root leaf
    expect(treeKeyAction(rows, 0, 'x', tree.parentOf)).toBeNull();
  });
});

describe('waterfall maths', () => {
  it('places bars as fractions of the trace, never thinner than the minimum', () => {
    const spans = [span('root', undefined, 0, 1000), span('a', 'root', 250, 500), span('b', 'root', 1000, 0)];
    const bounds = traceBounds(spans);
    expect(bounds.duration).toBe(1000);
    expect(barGeometry(spans[0]!, bounds)).toEqual({ left: 0, width: 1 });
    expect(barGeometry(spans[1]!, bounds)).toEqual({ left: 0.25, width: 0.5 });
    const instant = barGeometry(spans[2]!, bounds, 0.01);
    expect(instant.width).toBe(0.01);
    expect(instant.left + instant.width).toBeLessThanOrEqual(1);
    expect(traceBounds([])).toEqual({ start: 0, end: 1, duration: 1 });
  });

  it('picks 1-2-5 tick steps and formats durations', () => {
    expect(tickStep(1000, 5)).toBe(200);
    expect(tickStep(2400, 5)).toBe(500);
    expect(tickStep(7, 5)).toBe(2);
    expect(ticks(2400, 5)).toEqual([0, 500, 1000, 1500, 2000]);
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(0.25)).toBe('250 µs');
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1250)).toBe('1.25 s');
    expect(formatDuration(125_000)).toBe('2 m 5 s');
    expect(formatDuration(null)).toBe('—');
  });
});
