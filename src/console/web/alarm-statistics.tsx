import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { prioritiesUrgentFirst } from './alarm-words';
import { api } from './api-client';
import type { AlertStatistics } from './api-types';
import { FormError } from './form-error';
import { formatTime } from './format';
import { PriorityBadge } from './priority-badge';
import { href } from './router';
import { Table } from './table';
import { rangeText, timeAxisLabels, timeFormats } from './time-axis';
import { usePoll } from './use-poll';

const periods = [
  { label: 'Last hour', from: 'now-1h' },
  { label: 'Last 24 hours', from: 'now-24h' },
  { label: 'Last 7 days', from: 'now-7d' },
  { label: 'Last 30 days', from: 'now-30d' },
] as const;

/** More activations than this in 10 minutes is a flood (EEMUA 191), drawn on the chart. */
const floodLine = 10;

/**
 * The alarm system's performance (ISA-18.2, EEMUA 191) over a period, from
 * `GET /api/v2/Alerts/Statistics`: activations per 10 minutes (average, peak) with a chart of
 * every window against the flood line, the share of time in flood, the 10 most frequent alarms,
 * chattering and stale alarms, and shelving. Every figure is in text; the chart only shows its
 * shape.
 */
export function AlarmStatisticsReport() {
  const [periodIndex, setPeriodIndex] = useState(1);
  const period = periods[periodIndex] ?? periods[1];
  const stats = usePoll(
    () => api<AlertStatistics>(`/api/v2/Alerts/Statistics?from=${period.from}`),
    30_000,
    period.from,
  );
  const data = stats.data;
  const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
  return (
    <div class="alarm-statistics">
      <div class="toolbar">
        <label>
          Period{' '}
          <select
            value={periodIndex}
            onChange={(event) => setPeriodIndex(Number(event.currentTarget.value))}
          >
            {periods.map((entry, index) => (
              <option key={entry.from} value={index}>
                {entry.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <FormError>{stats.error}</FormError>
      {!data ? (
        stats.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <p class="muted">
            {rangeText(Date.parse(data.from), Date.parse(data.to), timeFormats(navigator.language))}
          </p>
          <h2 class="section-title">Alarm rate</h2>
          <dl class="facts stat-facts" data-testid="alarm-rate">
            <div>
              <dt>Alarms shown to operators</dt>
              <dd>
                {data.activations}
                {data.activations > 0 ? (
                  <span class="stat-priorities">
                    {prioritiesUrgentFirst
                      .filter((priority) => data.byPriority[priority] > 0)
                      .map((priority) => (
                        <span key={priority}>
                          {data.byPriority[priority]} <PriorityBadge priority={priority} />
                        </span>
                      ))}
                  </span>
                ) : null}
              </dd>
            </div>
            <div>
              <dt>Average per 10 minutes</dt>
              <dd>{data.perTenMinutes.average.toFixed(2)}</dd>
            </div>
            <div>
              <dt>Peak in 10 minutes</dt>
              <dd>
                {data.perTenMinutes.peak}
                {data.perTenMinutes.peakWindowStart
                  ? ` (from ${formatTime(data.perTenMinutes.peakWindowStart)})`
                  : ''}
              </dd>
            </div>
            <div>
              <dt>Time in flood (over {floodLine} per 10 minutes)</dt>
              <dd>
                {percent(data.floodShare)} ({data.floodWindows} of {data.windows} windows)
              </dd>
            </div>
            <div>
              <dt>Shelved</dt>
              <dd>
                {data.shelved.now} now, {data.shelved.actions} shelve action
                {data.shelved.actions === 1 ? '' : 's'} in the period
              </dd>
            </div>
          </dl>
          {data.perWindow && data.perWindow.length > 1 ? (
            <RateChart from={Date.parse(data.from)} counts={data.perWindow} />
          ) : null}
          <h2 class="section-title">Most frequent</h2>
          {data.mostFrequent.length === 0 ? (
            <p>No alarm was shown in this period.</p>
          ) : (
            <NameTable
              caption="The 10 most frequent alarms"
              column="Activations"
              rows={data.mostFrequent.map((row) => [row.name, String(row.activations)])}
            />
          )}
          <h2 class="section-title">Chattering</h2>
          {data.chattering.length === 0 ? (
            <p>No alarm chattered (3 or more activations within 60 s).</p>
          ) : (
            <NameTable
              caption="Chattering alarms: 3 or more activations within 60 s"
              column="Most within 60 s"
              rows={data.chattering.map((row) => [row.name, String(row.mostIn60s)])}
            />
          )}
          <h2 class="section-title">Stale</h2>
          {data.stale.length === 0 ? (
            <p>No alarm has been active for more than 24 hours.</p>
          ) : (
            <NameTable
              caption="Stale alarms: active for more than 24 hours"
              column="Active since"
              rows={data.stale.map((row) => [row.name, formatTime(row.activeSince)])}
            />
          )}
        </>
      )}
    </div>
  );
}

function NameTable({
  caption,
  column,
  rows,
}: {
  caption: string;
  column: string;
  rows: readonly (readonly [string, string])[];
}) {
  return (
    <Table class="stat-table" caption={caption} columns={['Alarm', column]}>
      {rows.map(([name, value]) => (
        <tr key={name}>
          <th scope="row">
            <a href={href('alarms', 'alarm', name)}>{name}</a>
          </th>
          <td>{value}</td>
        </tr>
      ))}
    </Table>
  );
}

/**
 * Activations per 10-minute window as bars, with the flood line: the shape of the period at a
 * glance. The figures above say the same in text, so the chart is one image with a summary.
 */
function RateChart({ from, counts }: { from: number; counts: readonly number[] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const formats = timeFormats(navigator.language);
    const times = counts.map((_, index) => (from + index * 600_000) / 1000);
    const style = getComputedStyle(document.documentElement);
    const colour = (name: string, fallback: string) =>
      style.getPropertyValue(name).trim() || fallback;
    const chart = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 180,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(12, max)] } },
        series: [
          {},
          {
            label: 'Alarms per 10 minutes',
            stroke: colour('--accent', '#0b5cad'),
            fill: colour('--highlight-bg', '#ddf4ff'),
            width: 1,
            paths: uPlot.paths.bars?.({ size: [0.8, 40], align: 1 }),
          },
          {
            label: 'Flood line',
            stroke: colour('--bad', '#a40e26'),
            width: 1,
            dash: [6, 4],
            points: { show: false },
          },
        ],
        axes: [
          {
            stroke: colour('--text', '#1b1f24'),
            grid: { stroke: colour('--line', '#d0d7de') },
            values: (_chart, splits, _axis, _space, increment) =>
              timeAxisLabels(splits, increment, formats),
          },
          {
            stroke: colour('--text', '#1b1f24'),
            grid: { stroke: colour('--line', '#d0d7de') },
            size: 40,
          },
        ],
      },
      [times, [...counts], counts.map(() => floodLine)],
      element,
    );
    const follow = new ResizeObserver(() => {
      if (host.current)
        chart.setSize({ width: Math.max(280, host.current.clientWidth), height: 180 });
    });
    follow.observe(element);
    return () => {
      follow.disconnect();
      chart.destroy();
    };
  }, [from, counts]);
  const peak = Math.max(0, ...counts);
  const flooded = counts.filter((count) => count > floodLine).length;
  return (
    <figure class="rate-chart">
      <div
        ref={host}
        class="chart"
        role="img"
        aria-label={`Bar chart of alarms per 10 minutes over ${counts.length} windows: peak ${peak}, ${flooded} above the flood line of ${floodLine}.`}
      />
      <figcaption class="muted">
        Alarms per 10-minute window; the dashed line is the flood line ({floodLine}).
      </figcaption>
    </figure>
  );
}
