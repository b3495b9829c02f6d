import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import type { Sample } from './api-types';
import { formatTime, formatValue } from './format';
import { HistoryChart } from './history-chart';
import { QualityBadge } from './quality-badge';
import { href } from './router';
import { can } from './session';
import { TagWriteControl } from './tag-write-control';
import { valueMeaning } from './value-meaning';
import { loadWriteAccess, type WriteAccess } from './write-access';

/**
 * The selected tag: value (coloured by its meaning where tagd defines one), quality, metadata
 * and its history. Where it lies below the tag list (a phone) it scrolls into view when a tag is
 * chosen.
 */
export function TagDetail({ path, sample }: { path: string; sample: Sample | undefined }) {
  const meta = sample?.metadata ?? {};
  const panel = useRef<HTMLElement>(null);
  useEffect(() => {
    const box = panel.current?.getBoundingClientRect();
    // Beside the list (a wide screen) it is in view already; below it, it would open unseen.
    if (box && (box.top < 0 || box.top > window.innerHeight / 2)) {
      panel.current?.scrollIntoView({ block: 'start' });
    }
  }, [path]);
  const meaning = valueMeaning(path, sample?.value);
  const mayWrite = can('TagWrite');
  const access = useSignal<WriteAccess | undefined>(undefined);
  useEffect(() => {
    access.value = undefined;
    if (!mayWrite) return;
    let current = true;
    loadWriteAccess(path)
      .then((found) => {
        if (current) access.value = found;
      })
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [path, mayWrite]);
  const rows: [string, string | undefined][] = [
    ['Timestamp', formatTime(sample?.utcTimestamp)],
    ['Unit', meta.unit],
    ['Source', meta.source],
    ['Description', meta.description],
    ['Reason', sample?.reason],
    ['Message', sample?.message],
  ];
  return (
    <section class="panel tag-detail" aria-labelledby="tag-detail-title" ref={panel}>
      <h2 id="tag-detail-title" class="tag-path">
        {path}
      </h2>
      <p class="tag-value-line">
        <output
          class={`tag-value${meaning ? ` meaning-${meaning}` : ''}`}
          aria-label="Value"
          data-testid="tag-value"
        >
          {formatValue(sample)}
          {meta.unit && sample?.value !== undefined ? ` ${meta.unit}` : ''}
        </output>
        {sample ? (
          <span class="quality-of">
            <span aria-hidden="true">Quality</span> <QualityBadge quality={sample.quality} />
          </span>
        ) : null}
      </p>
      <dl class="facts">
        {rows
          .filter(([, value]) => value)
          .map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd>{value}</dd>
            </div>
          ))}
      </dl>
      {access.value ? (
        <TagWriteControl
          key={path}
          path={path}
          access={access.value}
          current={sample?.value}
          unit={meta.unit}
        />
      ) : null}
      {typeof sample?.value === 'string' ? null : (
        <p>
          <a href={`${href('trends')}?pen=${encodeURIComponent(path).replace(/%2F/g, '/')}`}>
            Open in Trends
          </a>
        </p>
      )}
      <HistoryChart path={path} text={typeof sample?.value === 'string'} />
    </section>
  );
}
