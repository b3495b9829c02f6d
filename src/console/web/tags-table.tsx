import { useMemo, useState } from 'preact/hooks';
import type { Sample } from './api-types';
import { currentValuesCsv } from './csv';
import { downloadText, fileStamp } from './download';
import { formatTime, formatValue } from './format';
import { QualityBadge } from './quality-badge';
import { href } from './router';
import { feedTick, samples, tagPaths } from './tag-feed';
import {
  dataTypeOf,
  driverOf,
  type SortDirection,
  type SortKey,
  tableRows,
} from './tag-table-rows';
import { defaultPreset, maxPens, trendQuery } from './trend-range';
import { useViewport } from './use-viewport';

/** Row height, px (matches `.ttable td` in tags-table.css). */
const rowHeight = 34;
// Rows drawn beyond the viewport on each side, so fast scrolling shows no gaps.
const overscan = 8;

const columns: { key: SortKey; label: string }[] = [
  { key: 'path', label: 'Path' },
  { key: 'value', label: 'Value' },
  { key: 'timestamp', label: 'Timestamp' },
  { key: 'dataType', label: 'Data type' },
  { key: 'unit', label: 'Unit' },
  { key: 'quality', label: 'Quality' },
  { key: 'driver', label: 'Driver' },
  { key: 'address', label: 'Address' },
];

/** Props of {@link TagsTable}. */
export interface TagsTableProps {
  /** The tag whose detail is open. */
  open: string | undefined;
  /** Opens a tag's detail. */
  onOpen(path: string): void;
  /** The search the page was opened with (`?filter=`). */
  initialSearch: string;
}

/**
 * Every tag in one table: value, timestamp, data type (the value's kind), unit, quality, driver
 * (the path's first segment) and address (the driver's `source`), live from the stream. Each
 * column sorts (again to reverse); the order is taken when sorting or searching, and values
 * update in place, so rows do not jump under the pointer. The search matches path, unit and
 * description. Rows are selected with their check box; the selection exports as CSV or opens
 * as a trend. Only the rows in view are rendered: 10,000 tags cost the DOM of 30.
 */
export function TagsTable({ open, onOpen, initialSearch }: TagsTableProps) {
  const [search, setSearch] = useState(initialSearch);
  const [sort, setSort] = useState<{ key: SortKey; direction: SortDirection }>({
    key: 'path',
    direction: 'ascending',
  });
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [note, setNote] = useState<string | undefined>();
  const { viewport, scrollTop, setScrollTop, height } = useViewport();

  // Read so each batch of samples re-renders the rows in view.
  feedTick.value;
  const rows = useMemo(
    () => tableRows(tagPaths.value, samples, search, sort.key, sort.direction),
    [tagPaths.value, search, sort],
  );
  const shownSelected = rows.filter((path) => selected.has(path));
  const allShownSelected = rows.length > 0 && shownSelected.length === rows.length;

  const toggle = (path: string) => {
    const next = new Set(selected);
    if (next.has(path)) next.delete(path);
    else next.add(path);
    setSelected(next);
  };
  const sortBy = (key: SortKey) =>
    setSort((current) => ({
      key,
      direction:
        current.key === key && current.direction === 'ascending' ? 'descending' : 'ascending',
    }));

  const exportSelected = () => {
    const chosen = shownSelected
      .map((path) => samples.get(path))
      .filter((sample): sample is Sample => sample !== undefined);
    downloadText(`tags-${fileStamp(Date.now())}.csv`, currentValuesCsv(chosen));
    setNote(`Exported the current values of ${chosen.length} tags.`);
  };
  const trendSelected = () => {
    const drawable = shownSelected.filter((path) => typeof samples.get(path)?.value !== 'string');
    const pens = drawable.slice(0, maxPens);
    const left = shownSelected.length - pens.length;
    window.location.hash = `#/trends?${trendQuery({
      pens,
      range: { kind: 'live', preset: defaultPreset },
    })}`;
    if (left > 0)
      setNote(`${left} of the selected tags were left out (text, or beyond ${maxPens}).`);
  };

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  const body = [];
  for (let index = first; index < last; index += 1) {
    const path = rows[index] as string;
    const sample = samples.get(path);
    body.push(
      <tr
        key={path}
        aria-rowindex={index + 2}
        aria-selected={selected.has(path)}
        class={path === open ? 'open' : undefined}
        data-path={path}
      >
        <td class="ttable-check">
          <input
            type="checkbox"
            checked={selected.has(path)}
            aria-label={`Select ${path}`}
            onChange={() => toggle(path)}
          />
        </td>
        <th scope="row" class="ttable-path">
          <button type="button" class="link-button" title={path} onClick={() => onOpen(path)}>
            {path}
          </button>
        </th>
        <td class="ttable-value" data-column="value">
          {formatValue(sample)}
        </td>
        <td data-column="timestamp">{formatTime(sample?.utcTimestamp)}</td>
        <td data-column="dataType">{dataTypeOf(sample)}</td>
        <td data-column="unit">{sample?.metadata?.unit ?? ''}</td>
        <td data-column="quality">{sample ? <QualityBadge quality={sample.quality} /> : null}</td>
        <td data-column="driver">{driverOf(path)}</td>
        <td class="mono" data-column="address" title={sample?.metadata?.source}>
          {sample?.metadata?.source ?? ''}
        </td>
      </tr>,
    );
  }
  // Rows out of view are stood in for by padding, so the scroll height is the whole list's.
  const above = first * rowHeight;
  const below = (rows.length - last) * rowHeight;

  return (
    <div class="tags-table">
      <label class="field">
        <span>Search tags</span>
        <input
          type="search"
          value={search}
          placeholder="Path, unit or description, e.g. Line1 °C"
          onInput={(event) => {
            setSearch((event.target as HTMLInputElement).value);
            setScrollTop(0);
            if (viewport.current) viewport.current.scrollTop = 0;
          }}
        />
      </label>
      <div class="toolbar">
        <span class="hint" role="status">
          {search.trim()
            ? `${rows.length} of ${tagPaths.value.length} tags match`
            : `${tagPaths.value.length} tags`}
          {selected.size > 0 ? ` · ${shownSelected.length} selected` : ''}
        </span>
        <button type="button" disabled={shownSelected.length === 0} onClick={exportSelected}>
          Export CSV
        </button>
        <button type="button" disabled={shownSelected.length === 0} onClick={trendSelected}>
          Trend selected
        </button>
        {selected.size > 0 ? (
          <button type="button" onClick={() => setSelected(new Set())}>
            Clear selection
          </button>
        ) : null}
        {note ? <span class="hint">{note}</span> : null}
      </div>
      <div
        ref={viewport}
        class="ttable"
        onScroll={(event) => setScrollTop((event.currentTarget as HTMLElement).scrollTop)}
      >
        <div style={{ paddingTop: `${above}px`, paddingBottom: `${below}px` }}>
          <table aria-label="Tags" aria-rowcount={rows.length + 1}>
            <colgroup>
              <col class="ttable-check" />
              <col class="ttable-path" />
              <col span={2} class="ttable-wide" />
              <col span={4} class="ttable-narrow" />
              <col class="ttable-address" />
            </colgroup>
            <thead>
              <tr aria-rowindex={1}>
                <th scope="col" class="ttable-check">
                  <input
                    type="checkbox"
                    checked={allShownSelected}
                    aria-label="Select every tag shown"
                    onChange={() => {
                      const next = new Set(selected);
                      for (const path of rows) {
                        if (allShownSelected) next.delete(path);
                        else next.add(path);
                      }
                      setSelected(next);
                    }}
                  />
                </th>
                {columns.map((column) => (
                  <th
                    key={column.key}
                    scope="col"
                    aria-sort={sort.key === column.key ? sort.direction : 'none'}
                  >
                    <button type="button" class="sort-button" onClick={() => sortBy(column.key)}>
                      {column.label}
                      <span aria-hidden="true">
                        {sort.key === column.key
                          ? sort.direction === 'ascending'
                            ? ' ▲'
                            : ' ▼'
                          : ''}
                      </span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{body}</tbody>
          </table>
        </div>
      </div>
      <p class="hint">
        The order is taken when a column is sorted or the search changes; values keep updating in
        place. Open a tag's detail with its path. <a href={href('trends')}>Trends</a>
      </p>
    </div>
  );
}
