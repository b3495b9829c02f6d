import { useComputed, useSignal, useSignalEffect } from '@preact/signals';
import { useEffect, useMemo } from 'preact/hooks';
import { FormError } from './form-error';
import { href, route } from './router';
import { TagDetail } from './tag-detail';
import { feedState, feedTick, joinFeed, samples, tagPaths } from './tag-feed';
import { buildTree, visibleRows } from './tag-tree';
import { TagTreeRow } from './tag-tree-row';
import { TagsTable } from './tags-table';
import { VirtualList } from './virtual-list';

/** Row height of the tag tree, px (matches `.vrow` in styles.css). */
const rowHeight = 34;

/**
 * Tags: the tree of tag paths with a filter, live values and quality from Tags/Stream, and the
 * selected tag's metadata and history.
 */
export function TagsPage() {
  const filter = useSignal(route.value.query.get('filter') ?? '');
  const open = useSignal<ReadonlySet<string>>(new Set());
  const selected = useSignal<string | undefined>(undefined);
  const focusIndex = useSignal(-1);

  useEffect(() => joinFeed(), []);
  useSignalEffect(() => {
    const requested = route.value.query.get('filter');
    if (requested !== null) filter.value = requested;
  });

  const tree = useComputed(() => buildTree(tagPaths.value));
  const rows = useComputed(() => visibleRows(tree.value, open.value, filter.value));
  // Read so each batch of samples re-renders the rows in view.
  feedTick.value;

  const activate = (index: number) => {
    const row = rows.value[index];
    if (!row) return;
    focusIndex.value = index;
    if (row.kind === 'folder') {
      if (filter.value.trim()) return;
      const next = new Set(open.value);
      if (next.has(row.node.path)) next.delete(row.node.path);
      else next.add(row.node.path);
      open.value = next;
    } else {
      selected.value = row.node.path;
    }
  };

  const total = tagPaths.value.length;
  // Values held while the stream is down are the last received, not the device's current ones:
  // say so and dim them, so no stale Good passes for a live one.
  const lost = total > 0 && feedState.value !== 'live';
  const lostNotice = lost ? (
    <FormError>
      Not receiving updates from the gateway: the values shown are the last received.
    </FormError>
  ) : null;
  const shown = useMemo(() => rows.value.filter((row) => row.kind === 'tag').length, [rows.value]);
  const path = selected.value;
  // `#/tags?view=table`: every tag in one sortable table instead of the tree.
  const table = route.value.query.get('view') === 'table';
  const views = (
    <nav class="view-switch" aria-label="Tags view">
      <a href={href('tags')} aria-current={table ? undefined : 'page'}>
        Tree
      </a>
      <a href={`${href('tags')}?view=table`} aria-current={table ? 'page' : undefined}>
        Table
      </a>
    </nav>
  );
  const detail = path ? (
    <TagDetail path={path} sample={samples.get(path)} />
  ) : (
    <section class="panel tag-detail empty" aria-label="Tag details">
      <p>Select a tag to see its value, quality, metadata and history.</p>
    </section>
  );

  if (table) {
    return (
      <div class="tags-page table-view">
        <section
          class={`panel tag-browser${lost ? ' feed-lost' : ''}`}
          aria-labelledby="tags-title"
        >
          <div class="panel-head">
            <h1 id="tags-title">Tags</h1>
            {views}
            <span class={`feed feed-${feedState.value}`} role="status">
              {feedState.value === 'live' ? 'Live' : 'Not live'}
            </span>
          </div>
          {lostNotice}
          <TagsTable
            open={path}
            onOpen={(opened) => {
              selected.value = opened;
            }}
            initialSearch={route.value.query.get('filter') ?? ''}
          />
        </section>
        {path ? detail : null}
      </div>
    );
  }

  return (
    <div class="tags-page">
      <section class={`panel tag-browser${lost ? ' feed-lost' : ''}`} aria-labelledby="tags-title">
        <div class="panel-head">
          <h1 id="tags-title">Tags</h1>
          {views}
          <span class={`feed feed-${feedState.value}`} role="status">
            {feedState.value === 'live'
              ? 'Live'
              : feedState.value === 'stopped'
                ? 'Stopped'
                : feedState.value === 'connecting'
                  ? 'Connecting…'
                  : 'Reconnecting…'}
          </span>
        </div>
        {lostNotice}
        <label class="field">
          <span>Filter tags</span>
          <input
            type="search"
            value={filter.value}
            placeholder="Part of a path, e.g. Line1/Temp"
            onInput={(event) => {
              filter.value = (event.target as HTMLInputElement).value;
              focusIndex.value = -1;
            }}
          />
        </label>
        <p class="hint">
          {filter.value.trim() ? `${shown} of ${total} tags match` : `${total} tags`}
          {' · '}arrow keys move, Enter opens
        </p>
        <VirtualList
          label="Tag tree"
          count={rows.value.length}
          rowHeight={rowHeight}
          focusIndex={focusIndex.value}
          onMove={(index) => {
            focusIndex.value = index;
          }}
          row={(index) => {
            const row = rows.value[index];
            if (!row) return null;
            return (
              <TagTreeRow
                row={row}
                index={index}
                sample={row.kind === 'tag' ? samples.get(row.node.path) : undefined}
                selected={row.kind === 'tag' && row.node.path === path}
                onActivate={activate}
              />
            );
          }}
        />
      </section>
      {detail}
    </div>
  );
}
