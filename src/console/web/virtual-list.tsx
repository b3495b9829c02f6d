import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useViewport } from './use-viewport';

/** Props of {@link VirtualList}. */
export interface VirtualListProps {
  /** Number of rows. */
  count: number;
  /** Fixed height of a row, px (the CSS must agree). */
  rowHeight: number;
  /** Renders row `index`. */
  row(index: number): ComponentChildren;
  /** Accessible name of the list. */
  label: string;
  /** Index of the row to keep in view (keyboard selection). */
  focusIndex?: number;
  /** Arrow keys, Home and End move between rows: called with the new index. */
  onMove?(index: number): void;
}

// Rows drawn beyond the viewport on each side, so fast scrolling shows no gaps.
const overscan = 8;

/**
 * A scrolling list that renders only the rows in view: 10,000 tags cost the same DOM as 30.
 * Rows are absolutely placed in a spacer as tall as the whole list.
 */
export function VirtualList({
  count,
  rowHeight,
  row,
  label,
  focusIndex,
  onMove,
}: VirtualListProps) {
  const { viewport, scrollTop, setScrollTop, height } = useViewport();

  useEffect(() => {
    const element = viewport.current;
    if (!element || focusIndex === undefined || focusIndex < 0) return;
    const top = focusIndex * rowHeight;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + rowHeight > element.scrollTop + element.clientHeight) {
      element.scrollTop = top + rowHeight - element.clientHeight;
    }
    // Focus follows the selection once its row is rendered (next frame).
    requestAnimationFrame(() => {
      const row = element.querySelector<HTMLElement>(`.vrow[data-index="${focusIndex}"]`);
      const target = row?.querySelector<HTMLElement>('button, a, [tabindex]');
      if (target && element.contains(document.activeElement)) target.focus();
    });
  }, [focusIndex, rowHeight]);

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  const rows = [];
  for (let index = first; index < last; index += 1) {
    rows.push(
      <div
        key={index}
        class="vrow"
        data-index={index}
        style={{ transform: `translateY(${index * rowHeight}px)`, height: `${rowHeight}px` }}
      >
        {row(index)}
      </div>,
    );
  }

  const onKeyDown = (event: KeyboardEvent) => {
    if (!onMove || count === 0) return;
    const current = focusIndex ?? -1;
    const page = Math.max(1, Math.floor(height / rowHeight) - 1);
    const moves: Record<string, number> = {
      ArrowDown: current + 1,
      ArrowUp: current - 1,
      PageDown: current + page,
      PageUp: current - page,
      Home: 0,
      End: count - 1,
    };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    onMove(Math.min(count - 1, Math.max(0, next)));
  };

  return (
    <section
      ref={viewport}
      class="vlist"
      aria-label={label}
      onScroll={(event) => setScrollTop((event.currentTarget as HTMLElement).scrollTop)}
      onKeyDown={onKeyDown}
    >
      <div class="vlist-spacer" style={{ height: `${count * rowHeight}px` }}>
        {rows}
      </div>
    </section>
  );
}
