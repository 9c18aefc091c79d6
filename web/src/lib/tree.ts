/**
 * The span tree as the console shows it: spans linked by parentSpanId, children in start order,
 * flattened to the rows a virtual list renders. Pure (no DOM, no imports) so it is unit-tested
 * without a browser; iterative so a 10,000-deep chain cannot overflow the stack.
 */

export interface TreeSpan {
  spanId: string;
  parentSpanId?: string | null;
  startTime: string;
}

export interface SpanTree<S extends TreeSpan> {
  byId: Map<string, S>;
  /** Spans without a parent, or whose parent is not in the trace (still shown, at the top). */
  roots: S[];
  children: Map<string, S[]>;
  parentOf: Map<string, string>;
}

export interface TreeRow<S extends TreeSpan> {
  span: S;
  depth: number;
  hasChildren: boolean;
  expanded: boolean;
}

const byStart = <S extends TreeSpan>(a: S, b: S) => (a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0);

export function buildTree<S extends TreeSpan>(spans: readonly S[]): SpanTree<S> {
  const byId = new Map<string, S>();
  for (const span of spans) byId.set(span.spanId, span);
  const roots: S[] = [];
  const children = new Map<string, S[]>();
  const parentOf = new Map<string, string>();
  for (const span of spans) {
    const parent = span.parentSpanId;
    if (parent && parent !== span.spanId && byId.has(parent)) {
      parentOf.set(span.spanId, parent);
      const list = children.get(parent);
      if (list) list.push(span);
      else children.set(parent, [span]);
    } else roots.push(span);
  }
  roots.sort(byStart);
  for (const list of children.values()) list.sort(byStart);
  // A cycle (a is b's parent and b is a's) leaves spans unreachable from any root: show them as roots.
  const reachable = new Set<string>();
  const stack = [...roots];
  while (stack.length) {
    const span = stack.pop()!;
    reachable.add(span.spanId);
    for (const child of children.get(span.spanId) ?? []) stack.push(child);
  }
  if (reachable.size < byId.size) {
    for (const span of spans) {
      if (reachable.has(span.spanId)) continue;
      const parent = parentOf.get(span.spanId);
      if (parent)
        children.set(
          parent,
          (children.get(parent) ?? []).filter((c) => c.spanId !== span.spanId),
        );
      parentOf.delete(span.spanId);
      roots.push(span);
      const again = [span];
      while (again.length) {
        const s = again.pop()!;
        reachable.add(s.spanId);
        for (const child of children.get(s.spanId) ?? []) if (!reachable.has(child.spanId)) again.push(child);
      }
    }
    roots.sort(byStart);
  }
  return { byId, roots, children, parentOf };
}

/** Depth-first rows, skipping the descendants of collapsed spans. */
export function flattenTree<S extends TreeSpan>(tree: SpanTree<S>, collapsed: ReadonlySet<string>): TreeRow<S>[] {
  const rows: TreeRow<S>[] = [];
  const stack: Array<{ span: S; depth: number }> = [];
  for (let i = tree.roots.length - 1; i >= 0; i--) stack.push({ span: tree.roots[i]!, depth: 0 });
  while (stack.length) {
    const { span, depth } = stack.pop()!;
    const kids = tree.children.get(span.spanId) ?? [];
    const expanded = kids.length > 0 && !collapsed.has(span.spanId);
    rows.push({ span, depth, hasChildren: kids.length > 0, expanded });
    if (expanded) for (let i = kids.length - 1; i >= 0; i--) stack.push({ span: kids[i]!, depth: depth + 1 });
  }
  return rows;
}

/** The ancestors of a span, nearest first: expanded so a deep-linked span is visible. */
export function ancestorsOf(tree: SpanTree<TreeSpan>, spanId: string): string[] {
  const out: string[] = [];
  let current = tree.parentOf.get(spanId);
  while (current !== undefined && out.length <= tree.byId.size) {
    out.push(current);
    current = tree.parentOf.get(current);
  }
  return out;
}

export type TreeKeyAction = { select: number } | { toggle: string } | null;

/**
 * What a key does in the tree (the WAI-ARIA tree pattern): up/down move, Home/End jump, right
 * expands a collapsed span or moves to its first child, left collapses an expanded span or moves
 * to its parent.
 */
export function treeKeyAction<S extends TreeSpan>(
  rows: readonly TreeRow<S>[],
  index: number,
  key: string,
  parentOf: ReadonlyMap<string, string>,
): TreeKeyAction {
  if (rows.length === 0) return null;
  const row = rows[index];
  switch (key) {
    case 'ArrowDown':
      return { select: Math.min(rows.length - 1, index + 1) };
    case 'ArrowUp':
      return { select: Math.max(0, index - 1) };
    case 'Home':
      return { select: 0 };
    case 'End':
      return { select: rows.length - 1 };
    case 'ArrowRight':
      if (!row || !row.hasChildren) return null;
      return row.expanded ? { select: index + 1 } : { toggle: row.span.spanId };
    case 'ArrowLeft': {
      if (!row) return null;
      if (row.expanded) return { toggle: row.span.spanId };
      const parent = parentOf.get(row.span.spanId);
      if (parent === undefined) return null;
      for (let i = index - 1; i >= 0; i--) if (rows[i]!.span.spanId === parent) return { select: i };
      return null;
    }
    default:
      return null;
  }
}
