import type { Sample } from './api-types';
import { formatTime, formatValue } from './format';
import { HistoryChart } from './history-chart';
import { QualityBadge } from './quality-badge';

/** The selected tag: value, quality, metadata and its history. */
export function TagDetail({ path, sample }: { path: string; sample: Sample | undefined }) {
  const meta = sample?.metadata ?? {};
  const rows: [string, string | undefined][] = [
    ['Timestamp', formatTime(sample?.utcTimestamp)],
    ['Unit', meta.unit],
    ['Source', meta.source],
    ['Description', meta.description],
    ['Reason', sample?.reason],
    ['Message', sample?.message],
  ];
  return (
    <section class="panel tag-detail" aria-labelledby="tag-detail-title">
      <h2 id="tag-detail-title" class="tag-path">
        {path}
      </h2>
      <p class="tag-value-line">
        <output class="tag-value" aria-label="Value" data-testid="tag-value">
          {formatValue(sample)}
          {meta.unit && sample?.value !== undefined ? ` ${meta.unit}` : ''}
        </output>
        {sample ? <QualityBadge quality={sample.quality} /> : null}
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
      <HistoryChart path={path} />
    </section>
  );
}
