import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { SpanNode } from '../../api/types';
import { ancestorsOf, buildTree, flattenTree, treeKeyAction } from '../../lib/tree';
import { barGeometry, formatDuration, ticks, traceBounds } from '../../lib/timeline';
import { KindIcon, kindGroup } from '../../components/Kind';

const rowHeight = 30;

/**
 * The span tree and its waterfall, one row per span so both scroll together; only the rows in
 * view are in the DOM, so 10,000 spans cost what 40 do. Keyboard: the WAI-ARIA tree pattern.
 */
export function SpanTree({
  spans,
  selectedId,
  onSelect,
}: {
  spans: SpanNode[];
  selectedId: string | undefined;
  onSelect: (spanId: string) => void;
}) {
  const tree = useMemo(() => buildTree(spans), [spans]);
  const bounds = useMemo(() => traceBounds(spans), [spans]);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  const rows = useMemo(() => flattenTree(tree, collapsed), [tree, collapsed]);
  const indexOf = useMemo(() => new Map(rows.map((r, i) => [r.span.spanId, i])), [rows]);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 12,
  });

  // A selected span (a deep link) inside collapsed parents opens them.
  useEffect(() => {
    if (!selectedId || indexOf.has(selectedId)) return;
    const hidden = ancestorsOf(tree, selectedId).filter((id) => collapsed.has(id));
    if (hidden.length) setCollapsed((c) => new Set([...c].filter((id) => !hidden.includes(id))));
  }, [selectedId, indexOf, tree, collapsed]);

  const selectedIndex = selectedId !== undefined ? indexOf.get(selectedId) : undefined;
  useEffect(() => {
    if (selectedIndex !== undefined) virtualizer.scrollToIndex(selectedIndex, { align: 'auto' });
  }, [selectedIndex, virtualizer]);

  function toggle(spanId: string) {
    setCollapsed((c) => {
      const next = new Set(c);
      if (next.has(spanId)) next.delete(spanId);
      else next.add(spanId);
      return next;
    });
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const action = treeKeyAction(rows, selectedIndex ?? 0, event.key, tree.parentOf);
    if (event.key === 'Enter' || event.key === ' ') {
      const row = rows[selectedIndex ?? 0];
      if (row?.hasChildren) toggle(row.span.spanId);
      event.preventDefault();
      return;
    }
    if (!action) return;
    event.preventDefault();
    if ('toggle' in action) toggle(action.toggle);
    else {
      const row = rows[action.select];
      if (row) onSelect(row.span.spanId);
    }
  }

  const axis = ticks(bounds.duration, 5);
  return (
    <div className="span-tree">
      <div className="span-tree-head" aria-hidden="true">
        <div className="col-tree">Span</div>
        <div className="col-bar axis">
          {axis.map((t) => (
            <span key={t} className="tick" style={{ left: `${(t / bounds.duration) * 100}%` }}>
              {formatDuration(t)}
            </span>
          ))}
        </div>
      </div>
      <div
        ref={scrollRef}
        className="span-tree-scroll"
        role="tree"
        aria-label="Spans"
        tabIndex={0}
        aria-activedescendant={selectedId ? `span-row-${selectedId}` : undefined}
        onKeyDown={onKeyDown}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index]!;
            const span = row.span;
            const bar = barGeometry(span, bounds);
            const selected = span.spanId === selectedId;
            return (
              <div
                key={span.spanId}
                id={`span-row-${span.spanId}`}
                role="treeitem"
                aria-level={row.depth + 1}
                aria-selected={selected}
                aria-expanded={row.hasChildren ? row.expanded : undefined}
                aria-setsize={rows.length}
                aria-posinset={item.index + 1}
                className={`span-row${selected ? ' selected' : ''}${span.status === 'error' ? ' is-error' : ''}`}
                style={{ transform: `translateY(${item.start}px)`, height: rowHeight }}
                onClick={() => onSelect(span.spanId)}
                data-span-id={span.spanId}
              >
                <div className="col-tree" style={{ paddingLeft: 8 + Math.min(row.depth, 40) * 14 }}>
                  {row.hasChildren ? (
                    <span
                      className="twisty"
                      aria-hidden="true"
                      onClick={(e) => {
                        e.stopPropagation();
                        toggle(span.spanId);
                      }}
                    >
                      {row.expanded ? '▾' : '▸'}
                    </span>
                  ) : (
                    <span className="twisty" aria-hidden="true" />
                  )}
                  <KindIcon kind={span.kind} />
                  <span className="span-name" title={span.name}>
                    {span.name}
                  </span>
                  {span.status === 'error' && <span className="dot-error" title="error" aria-label="error" role="img" />}
                  <span className="span-dur">{formatDuration(span.durationMs)}</span>
                </div>
                <div className="col-bar">
                  <span
                    className={`bar bar-${kindGroup(span.kind)} bar-status-${span.status}`}
                    style={{ left: `${bar.left * 100}%`, width: `${bar.width * 100}%` }}
                  />
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
