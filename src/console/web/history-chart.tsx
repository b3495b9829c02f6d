import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { ApiError, api } from './api-client';
import type { Sample } from './api-types';
import { formatValue } from './format';
import { QualityBadge } from './quality-badge';
import { rangeText, type TimeFormats, timeAxisLabels, timeFormats } from './time-axis';

/** A history range the user can pick: its length and the window its averages take. */
const ranges = [
  { label: 'Last 15 minutes', start: 'now-15m', seconds: 900, window: '10s', per: '10-second' },
  { label: 'Last hour', start: 'now-1h', seconds: 3_600, window: '1m', per: '1-minute' },
  { label: 'Last 24 hours', start: 'now-24h', seconds: 86_400, window: '15m', per: '15-minute' },
  { label: 'Last 7 days', start: 'now-7d', seconds: 604_800, window: '1h', per: '1-hour' },
] as const;

/** The newest logged values a text tag lists. */
const maxListed = 100;

type Mode = 'Raw' | 'Aggregated';
type Status =
  | { kind: 'loading' }
  | { kind: 'chart'; points: number; numeric: boolean; mode: Mode; per: string; range: string }
  | { kind: 'list'; rows: Sample[]; total: number; range: string; formats: TimeFormats }
  | { kind: 'not-configured' }
  | { kind: 'error'; message: string };

// One query set per page, replaced on every load: a set per chart would pile up against the
// account's limit of 100 sets until each expired.
let querySetId: string | undefined;

/** Props of {@link HistoryChart}. */
export interface HistoryChartProps {
  path: string;
  /** The tag's value is text (its current sample's): its values are listed, never averaged. */
  text: boolean;
}

/**
 * The logged history of one tag, read through `POST /api/v2/TagQuerySet` with a Logged binding
 * (Raw, or Aggregated as averages per window) and drawn with uPlot over the whole range chosen,
 * whatever part of it holds values (one average of a gateway started minutes ago sits at the
 * right end of "Last 7 days"). Times on the axis, in the legend and above the chart are in the
 * browser's language. Text values are listed, newest first, not charted. When the gateway keeps
 * no history (409 `history-not-configured`) it says so instead.
 */
export function HistoryChart({ path, text }: HistoryChartProps) {
  const [rangeIndex, setRangeIndex] = useState(1);
  const [mode, setMode] = useState<Mode>('Raw');
  const [status, setStatus] = useState<Status>({ kind: 'loading' });
  const host = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let cancelled = false;
    let chart: uPlot | undefined;
    let follow: ResizeObserver | undefined;
    const range = ranges[rangeIndex] ?? ranges[1];
    // Text has no average: its values are read raw and listed.
    const read: Mode = text ? 'Raw' : mode;
    setStatus({ kind: 'loading' });
    load(path, range.start, read, range.window)
      .then((samples) => {
        const element = host.current;
        if (cancelled || !element) return;
        const formats = timeFormats(navigator.language);
        // The range the server resolved "now-…" against, as near as this clock knows it.
        const lastMs = Date.parse(samples.at(-1)?.utcTimestamp ?? '');
        const stopMs = Math.max(Date.now(), Number.isNaN(lastMs) ? 0 : lastMs);
        const startMs = stopMs - range.seconds * 1000;
        const shownRange = rangeText(startMs, stopMs, formats);
        if (text || (read === 'Raw' && isText(samples))) {
          setStatus({
            kind: 'list',
            rows: samples.slice(-maxListed).reverse(),
            total: samples.length,
            range: shownRange,
            formats,
          });
          return;
        }
        const times: number[] = [];
        const values: (number | null)[] = [];
        let discrete = false;
        for (const sample of samples) {
          times.push(Date.parse(sample.utcTimestamp) / 1000);
          const { value } = sample;
          if (typeof value === 'boolean') discrete = true;
          values.push(
            typeof value === 'number' ? value : typeof value === 'boolean' ? Number(value) : null,
          );
        }
        chart = new uPlot(
          {
            width: Math.max(280, element.clientWidth),
            height: 220,
            scales: { x: { time: true, range: () => [startMs / 1000, stopMs / 1000] } },
            series: [
              {
                value: (_chart, seconds) =>
                  seconds === null ? '--' : formats.moment.format(new Date(seconds * 1000)),
              },
              {
                label: path.split('/').pop() ?? path,
                stroke: '#1f6feb',
                width: 2,
                // A boolean holds its value until the next one: a step, not a slope.
                ...(discrete ? { paths: uPlot.paths.stepped?.({ align: 1 }) } : {}),
              },
            ],
            axes: [
              {
                values: (_chart, splits, _axis, _space, increment) => {
                  const labels = timeAxisLabels(splits, increment, formats);
                  // The labels drawn on the canvas, readable in the page (tests, tools).
                  element.dataset.timeTicks = JSON.stringify(labels);
                  return labels;
                },
              },
              { size: 60 },
            ],
            legend: { show: true },
          },
          [times, values],
          element,
        );
        // Follows the panel's width (a rotated phone, a resized window).
        follow = new ResizeObserver(() => {
          if (chart && host.current)
            chart.setSize({ width: Math.max(280, host.current.clientWidth), height: 220 });
        });
        follow.observe(element);
        setStatus({
          kind: 'chart',
          points: times.length,
          numeric: values.some((value) => value !== null),
          mode: read,
          per: range.per,
          range: shownRange,
        });
      })
      .catch((error: unknown) => {
        if (cancelled) return;
        if (error instanceof ApiError && error.problem.code === 'history-not-configured') {
          setStatus({ kind: 'not-configured' });
        } else {
          setStatus({ kind: 'error', message: (error as Error).message });
        }
      });
    return () => {
      cancelled = true;
      follow?.disconnect();
      chart?.destroy();
      if (host.current) delete host.current.dataset.timeTicks;
    };
  }, [path, rangeIndex, mode, text]);

  return (
    <section class="history" aria-labelledby="history-title">
      <h3 id="history-title">History</h3>
      <div class="toolbar">
        <label>
          Range{' '}
          <select
            value={rangeIndex}
            onChange={(event) => setRangeIndex(Number((event.target as HTMLSelectElement).value))}
          >
            {ranges.map((range, index) => (
              <option key={range.start} value={index}>
                {range.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Series{' '}
          <select
            value={text ? 'Raw' : mode}
            disabled={text}
            onChange={(event) => setMode((event.target as HTMLSelectElement).value as Mode)}
          >
            <option value="Raw">Logged raw</option>
            <option value="Aggregated">Logged aggregated (average)</option>
          </select>
        </label>
      </div>
      <p class="history-status" role="status">
        {statusText(status)}
      </p>
      {status.kind === 'chart' || status.kind === 'list' ? (
        <p class="history-range">{status.range}</p>
      ) : null}
      {status.kind === 'list' && status.rows.length > 0 ? (
        <div class="table-wrap">
          <table class="history-table">
            <caption>Logged values of {path}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Value</th>
                <th scope="col">Quality</th>
              </tr>
            </thead>
            <tbody>
              {status.rows.map((sample, index) => (
                <tr key={`${sample.utcTimestamp}-${index}`}>
                  <th scope="row">{status.formats.moment.format(new Date(sample.utcTimestamp))}</th>
                  <td class="history-value">{formatValue(sample)}</td>
                  <td>
                    <QualityBadge quality={sample.quality} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div ref={host} class="chart" />
    </section>
  );
}

function statusText(status: Status): string {
  switch (status.kind) {
    case 'loading':
      return 'Loading history…';
    case 'not-configured':
      return 'History is not configured on this gateway: its profile has no history database, so only live values are available.';
    case 'error':
      return `History could not be read: ${status.message}`;
    case 'list': {
      if (status.total === 0) return 'No logged values in this range.';
      const count = plural(status.total, 'logged value');
      return status.total > status.rows.length
        ? `Text values are listed, not charted: ${count}, the newest ${status.rows.length} below.`
        : `Text values are listed, not charted: ${count}.`;
    }
    case 'chart': {
      if (status.points === 0) return 'No logged values in this range.';
      if (status.mode === 'Raw') {
        return status.numeric
          ? `${plural(status.points, 'logged value')}.`
          : `${plural(status.points, 'logged value')}, none of them a number or boolean to chart.`;
      }
      return status.numeric
        ? `${plural(status.points, 'average')} of ${status.per} windows.`
        : `${plural(status.points, `${status.per} window`)} logged, none with a Good or Stale value to average.`;
    }
  }
}

function plural(count: number, noun: string): string {
  return `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`;
}

/** Text values only (a tag never read as a number or boolean in this range). */
function isText(samples: readonly Sample[]): boolean {
  let text = false;
  for (const { value } of samples) {
    if (typeof value === 'number' || typeof value === 'boolean') return false;
    if (typeof value === 'string') text = true;
  }
  return text;
}

async function load(path: string, start: string, mode: Mode, window: string): Promise<Sample[]> {
  const binding = {
    source: path,
    store: 'Logged',
    timeRangeStart: start,
    timeRangeStop: 'now',
    seriesMode: mode,
    ...(mode === 'Aggregated' ? { aggregationWindow: window, aggregationFunction: 'Avg' } : {}),
  };
  const request = (srcSetId?: string) =>
    api<{ srcSetId: string; values: Sample[] }>('/api/v2/TagQuerySet', {
      method: 'POST',
      body: { ...(srcSetId ? { srcSetId } : {}), bindings: [binding] },
    });
  let answer: { srcSetId: string; values: Sample[] };
  try {
    answer = await request(querySetId);
  } catch (error) {
    // The set expired (10 minutes unpolled) or belonged to an earlier sign-in: start a new one.
    if (!(error instanceof ApiError) || error.status !== 404 || !querySetId) throw error;
    answer = await request();
  }
  querySetId = answer.srcSetId;
  return answer.values;
}
