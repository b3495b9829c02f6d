import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { ApiError, api } from './api-client';
import type { Sample } from './api-types';

/** A history range the user can pick. */
const ranges = [
  { label: 'Last 15 minutes', start: 'now-15m', window: '10s' },
  { label: 'Last hour', start: 'now-1h', window: '1m' },
  { label: 'Last 24 hours', start: 'now-24h', window: '15m' },
  { label: 'Last 7 days', start: 'now-7d', window: '1h' },
] as const;

type Mode = 'Raw' | 'Aggregated';
type Status =
  | { kind: 'loading' }
  | { kind: 'ready'; points: number; numeric: boolean }
  | { kind: 'not-configured' }
  | { kind: 'error'; message: string };

// One query set per page, replaced on every load: a set per chart would pile up against the
// account's limit of 100 sets until each expired.
let querySetId: string | undefined;

/**
 * The logged history of one tag, read through `POST /api/v2/TagQuerySet` with a Logged binding
 * (Raw, or Aggregated as averages per window) and drawn with uPlot. When the gateway keeps no
 * history (409 `history-not-configured`) it says so instead.
 */
export function HistoryChart({ path }: { path: string }) {
  const [rangeIndex, setRangeIndex] = useState(1);
  const [mode, setMode] = useState<Mode>('Raw');
  const [status, setStatus] = useState<Status>({ kind: 'loading' });
  const host = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let cancelled = false;
    let chart: uPlot | undefined;
    let follow: ResizeObserver | undefined;
    const range = ranges[rangeIndex] ?? ranges[1];
    setStatus({ kind: 'loading' });
    load(path, range.start, mode, range.window)
      .then(({ times, values }) => {
        if (cancelled || !host.current) return;
        const width = Math.max(280, host.current.clientWidth);
        chart = new uPlot(
          {
            width,
            height: 220,
            series: [{}, { label: path.split('/').pop() ?? path, stroke: '#1f6feb', width: 2 }],
            axes: [{}, { size: 60 }],
            legend: { show: true },
          },
          [times, values],
          host.current,
        );
        // Follows the panel's width (a rotated phone, a resized window).
        follow = new ResizeObserver(() => {
          if (chart && host.current)
            chart.setSize({ width: Math.max(280, host.current.clientWidth), height: 220 });
        });
        follow.observe(host.current);
        setStatus({
          kind: 'ready',
          points: times.length,
          numeric: values.some((value) => value !== null),
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
    };
  }, [path, rangeIndex, mode]);

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
            value={mode}
            onChange={(event) => setMode((event.target as HTMLSelectElement).value as Mode)}
          >
            <option value="Raw">Logged raw</option>
            <option value="Aggregated">Logged aggregated (average)</option>
          </select>
        </label>
      </div>
      <p class="history-status" role="status">
        {status.kind === 'loading'
          ? 'Loading history…'
          : status.kind === 'not-configured'
            ? 'History is not configured on this gateway: its profile has no history database, so only live values are available.'
            : status.kind === 'error'
              ? `History could not be read: ${status.message}`
              : status.points === 0
                ? 'No logged values in this range.'
                : status.numeric
                  ? `${status.points} logged values.`
                  : `${status.points} logged values, none of them a number or boolean to chart.`}
      </p>
      <div ref={host} class="chart" />
    </section>
  );
}

async function load(
  path: string,
  start: string,
  mode: Mode,
  window: string,
): Promise<{ times: number[]; values: (number | null)[] }> {
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
  const times: number[] = [];
  const values: (number | null)[] = [];
  for (const sample of answer.values) {
    times.push(Date.parse(sample.utcTimestamp) / 1000);
    const value = sample.value;
    values.push(
      typeof value === 'number' ? value : typeof value === 'boolean' ? Number(value) : null,
    );
  }
  return { times, values };
}
