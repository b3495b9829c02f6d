import { useSignalEffect } from '@preact/signals';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from './api-client';
import type { Quality } from './api-types';
import { type HistoryRow, historyCsv } from './csv';
import { downloadText, fileStamp } from './download';
import { QualityBadge } from './quality-badge';
import { route } from './router';
import { feedState, feedTick, joinFeed, onBatch, samples, tagPaths } from './tag-feed';
import { rangeText, timeFormats } from './time-axis';
import { TrendChart } from './trend-chart';
import { isTooManyValues, readTrendHistory, seriesLabel } from './trend-history';
import { type PenInfo, penColours, penDashes, penInfo, refusal } from './trend-pens';
import {
  fromLocalInput,
  maxRangeMs,
  minRangeMs,
  panRange,
  parseTrendQuery,
  planQuery,
  type QueryPlan,
  rangePresets,
  resolveRange,
  type TrendRange,
  type TrendState,
  toLocalInput,
  trendQuery,
  windowWords,
  zoomRange,
} from './trend-range';
import {
  addLiveSample,
  badSpans,
  emptySeries,
  type PenSeries,
  pointAt,
  seriesFromSamples,
  trimBefore,
} from './trend-series';

/** Most tags the picker suggests at once. */
const maxSuggestions = 50;
/** Width of one y axis, CSS px (as the chart draws it). */
const axisWidth = 56;

type Status =
  | { kind: 'idle' }
  | { kind: 'loading' }
  | { kind: 'loaded'; plan: QueryPlan; points: number; fellBack: boolean }
  | { kind: 'not-configured' }
  | { kind: 'error'; message: string };

/**
 * Trends: several tags over time on one chart. Pens are added from a search of the tag paths
 * and removed from the legend; each has its colour and dash, its unit on an axis of its own
 * (at most three axes). The range is a preset that follows now, with the live stream appended
 * while the page is open, or a fixed span (from/to, a drag across the plot, the wheel, the
 * buttons). History comes raw for ranges up to an hour, else as one aggregation window per
 * pixel column or fewer. Pens and range live in the URL, so a trend is shared by its link and
 * survives a reload. The pens' history exports as CSV, raw or aggregated as drawn.
 */
export function TrendsPage() {
  const [state, setState] = useState<TrendState>(() => parseTrendQuery(route.value.query));
  const [nowMs, setNowMs] = useState(() => Date.now());
  const [version, setVersion] = useState(0);
  const [status, setStatus] = useState<Status>({ kind: 'idle' });
  const [message, setMessage] = useState<{ text: string; error: boolean } | undefined>();
  const [search, setSearch] = useState('');
  const [cursor, setCursor] = useState<number | undefined>(undefined);
  const plotBox = useRef<HTMLDivElement>(null);
  const store = useRef(new Map<string, PenSeries>());
  const plan = useRef<QueryPlan>({ mode: 'Raw' });
  const formats = useMemo(() => timeFormats(navigator.language), []);

  useEffect(() => joinFeed(), []);
  // Another trend's link opened while this page is shown.
  useSignalEffect(() => {
    const wanted = parseTrendQuery(route.value.query);
    setState((current) => (trendQuery(current) === trendQuery(wanted) ? current : wanted));
  });
  // The URL follows the trend (replaced, not pushed: zooming must not fill the history).
  useEffect(() => {
    const hash = `#/trends?${trendQuery(state)}`;
    if (window.location.hash !== hash) window.history.replaceState(null, '', hash);
  }, [state]);

  // Pens are known by their current sample: number or boolean, and the unit.
  feedTick.value;
  const pens: PenInfo[] = state.pens.map((path) => penInfo(path, samples.get(path)));
  const shape = pens.map((pen) => `${pen.path}|${pen.kind}|${pen.unit}`).join('\n');
  const live = state.range.kind === 'live';
  const { startMs, stopMs } = resolveRange(state.range, nowMs);
  const rangeKey =
    state.range.kind === 'live'
      ? state.range.preset.id
      : `${state.range.fromMs}-${state.range.toMs}`;

  // The pens' kinds and units come with the stream's first event: read history after it, so
  // a trend opened from a link is not read twice (and a boolean not averaged).
  const known = tagPaths.value.length > 0;

  // The stream lost: nothing is known from then on, so each pen's line breaks there (marked
  // Unavailable) instead of joining the last value before to the first after. Back: the range
  // is read again, so the history fills what the page missed.
  const [reload, setReload] = useState(0);
  const feedWasLive = useRef(false);
  const feed = feedState.value;
  useEffect(() => {
    if (feed === 'live') {
      if (feedWasLive.current === false && store.current.size > 0 && status.kind !== 'idle') {
        setReload((value) => value + 1);
      }
      feedWasLive.current = true;
      return;
    }
    if (!feedWasLive.current) return;
    feedWasLive.current = false;
    if (!live) return;
    const at = new Date().toISOString();
    for (const [path, series] of store.current) {
      addLiveSample(
        series,
        { fullTagId: path, utcTimestamp: at, quality: 'Unavailable' },
        plan.current,
        'number',
      );
    }
    setVersion((value) => value + 1);
  }, [feed]);

  // History of the range, whenever pens or range change.
  useEffect(() => {
    if (!known) return;
    if (pens.length === 0) {
      store.current = new Map();
      setStatus({ kind: 'idle' });
      setVersion((value) => value + 1);
      return;
    }
    let cancelled = false;
    const range = state.range;
    const seconds =
      range.kind === 'live' ? range.preset.seconds : (range.toMs - range.fromMs) / 1000;
    const axes = new Set(pens.map((pen) => (pen.kind === 'boolean' ? 'bool' : pen.unit))).size;
    const width = Math.max(200, (plotBox.current?.clientWidth ?? 800) - axes * axisWidth);
    const start =
      range.kind === 'live' ? `now-${range.preset.seconds}s` : new Date(range.fromMs).toISOString();
    const stop = range.kind === 'live' ? 'now' : new Date(range.toMs).toISOString();
    // Live samples arriving meanwhile land in fresh series and survive the load when newer.
    const fresh = new Map<string, PenSeries>(pens.map((pen) => [pen.path, emptySeries()]));
    store.current = fresh;
    setStatus({ kind: 'loading' });
    setNowMs(Date.now());
    const load = async (forceAggregated: boolean): Promise<void> => {
      const chosen = planQuery(seconds, width, forceAggregated);
      plan.current = chosen;
      const byPen = await readTrendHistory(pens, start, stop, chosen);
      if (cancelled) return;
      let points = 0;
      pens.forEach((pen, index) => {
        const series = seriesFromSamples(byPen[index] ?? []);
        const arrived = fresh.get(pen.path);
        for (let at = 0; arrived && at < arrived.times.length; at += 1) {
          addLiveSample(
            series,
            {
              fullTagId: pen.path,
              utcTimestamp: new Date((arrived.times[at] as number) * 1000).toISOString(),
              quality: arrived.qualities[at] as Quality,
              ...(arrived.values[at] === null ? {} : { value: arrived.values[at] as number }),
            },
            chosen,
            pen.kind,
          );
        }
        points += series.times.length;
        fresh.set(pen.path, series);
      });
      setStatus({ kind: 'loaded', plan: chosen, points, fellBack: forceAggregated });
      setVersion((value) => value + 1);
    };
    load(false)
      .catch((error: unknown) => {
        if (!cancelled && isTooManyValues(error) && plan.current.mode === 'Raw') return load(true);
        throw error;
      })
      .catch((error: unknown) => {
        if (cancelled) return;
        if (error instanceof ApiError && error.problem.code === 'history-not-configured') {
          // Live values still come: raw, from now on.
          plan.current = { mode: 'Raw' };
          setStatus({ kind: 'not-configured' });
        } else setStatus({ kind: 'error', message: (error as Error).message });
      });
    return () => {
      cancelled = true;
    };
  }, [shape, rangeKey, known, reload]);

  // Live: the stream's samples of the pens are appended (or folded into windows); the window
  // follows now, redrawn at most once per frame.
  useEffect(() => {
    if (!live || pens.length === 0) return;
    const kinds = new Map(pens.map((pen) => [pen.path, pen.kind]));
    let frame = 0;
    const redraw = () => {
      frame = 0;
      const now = Date.now();
      const start = state.range.kind === 'live' ? now / 1000 - state.range.preset.seconds : 0;
      for (const series of store.current.values()) trimBefore(series, start);
      setNowMs(now);
      setVersion((value) => value + 1);
    };
    const stop = onBatch((batch) => {
      let changed = false;
      for (const sample of batch) {
        const kind = kinds.get(sample.fullTagId);
        const series = store.current.get(sample.fullTagId);
        if (kind && series && addLiveSample(series, sample, plan.current, kind)) changed = true;
      }
      if (changed && frame === 0) frame = requestAnimationFrame(redraw);
    });
    // The window slides with the clock even when no sample comes.
    const timer = setInterval(() => {
      if (frame === 0) frame = requestAnimationFrame(redraw);
    }, 1_000);
    return () => {
      stop();
      clearInterval(timer);
      cancelAnimationFrame(frame);
    };
  }, [shape, rangeKey]);

  const setRange = (range: TrendRange) => setState((current) => ({ ...current, range }));
  const fix = (from: number, to: number) => {
    const span = Math.min(maxRangeMs, Math.max(minRangeMs, to - from));
    setRange({ kind: 'fixed', fromMs: Math.round(from), toMs: Math.round(from + span) });
  };

  const addPen = (path: string) => {
    const wanted = path.trim();
    if (!wanted) return;
    if (!samples.has(wanted)) {
      setMessage({ text: `No tag ${wanted}: pick one of the suggestions.`, error: true });
      return;
    }
    const refused = refusal(pens, wanted, samples.get(wanted));
    if (refused) {
      setMessage({ text: refused, error: true });
      return;
    }
    setMessage(undefined);
    setSearch('');
    setState((current) => ({ ...current, pens: [...current.pens, wanted] }));
  };
  const removePen = (path: string) =>
    setState((current) => ({ ...current, pens: current.pens.filter((pen) => pen !== path) }));

  const exportCsv = async () => {
    if (pens.length === 0) return;
    const exportPlan = plan.current;
    const from = new Date(startMs).toISOString();
    const to = new Date(stopMs).toISOString();
    setMessage({ text: 'Exporting…', error: false });
    try {
      const byPen = await readTrendHistory(pens, from, to, exportPlan);
      const rows: HistoryRow[] = [];
      pens.forEach((pen, index) => {
        for (const sample of byPen[index] ?? []) {
          rows.push({
            utcTimestamp: sample.utcTimestamp,
            path: pen.path,
            ...(sample.value !== undefined ? { value: sample.value } : {}),
            unit: pen.unit,
            quality: sample.quality,
            series: seriesLabel(pen, exportPlan),
          });
        }
      });
      downloadText(`trend-${fileStamp(startMs)}-${fileStamp(stopMs)}.csv`, historyCsv(rows));
      setMessage({
        text: `Exported ${rows.length.toLocaleString()} rows (${describePlan(exportPlan)}), ${rangeText(startMs, stopMs, formats)}.`,
        error: false,
      });
    } catch (error) {
      setMessage({
        text: isTooManyValues(error)
          ? `Too many values for one export: ${(error as Error).message}`
          : `The history could not be exported: ${(error as Error).message}`,
        error: true,
      });
    }
  };

  const query = search.trim().toLowerCase();
  const suggestions = useMemo(() => {
    if (!query) return [];
    const found: string[] = [];
    for (const path of tagPaths.value) {
      if (path.toLowerCase().includes(query) && !state.pens.includes(path)) found.push(path);
      if (found.length >= maxSuggestions) break;
    }
    return found;
  }, [query, tagPaths.value, state.pens]);

  const series = () => pens.map((pen) => store.current.get(pen.path) ?? emptySeries());
  const selectValue = state.range.kind === 'live' ? state.range.preset.id : 'custom';

  return (
    <div class="trends-page">
      <section class="panel trend-panel" aria-labelledby="trends-title">
        <div class="panel-head">
          <h1 id="trends-title">Trends</h1>
          <span class={`feed feed-${live ? feedState.value : 'stopped'}`} role="status">
            {!live
              ? 'Fixed range'
              : feedState.value === 'live'
                ? 'Live'
                : feedState.value === 'reconnecting'
                  ? 'Reconnecting…'
                  : 'Connecting…'}
          </span>
        </div>
        <form
          class="toolbar trend-add"
          onSubmit={(event) => {
            event.preventDefault();
            addPen(search);
          }}
        >
          <label class="field">
            <span>Add a tag</span>
            <input
              type="search"
              list="trend-tag-options"
              value={search}
              placeholder="Part of a path, e.g. Line1/Temp"
              autocomplete="off"
              onInput={(event) => setSearch((event.target as HTMLInputElement).value)}
            />
          </label>
          <datalist id="trend-tag-options">
            {suggestions.map((path) => (
              <option key={path} value={path} />
            ))}
          </datalist>
          <button type="submit" class="primary">
            Add pen
          </button>
        </form>
        {message ? (
          <p
            class={message.error ? 'form-error' : 'hint'}
            role={message.error ? 'alert' : 'status'}
          >
            {message.text}
          </p>
        ) : null}
        <RangeControls
          range={state.range}
          selectValue={selectValue}
          startMs={startMs}
          stopMs={stopMs}
          onPreset={(id) => {
            const preset = rangePresets.find((candidate) => candidate.id === id);
            if (preset) setRange({ kind: 'live', preset });
          }}
          onFixed={fix}
        />
        <p class="trend-range-text">{rangeText(startMs, stopMs, formats)}</p>
        <p class="history-status trend-status" role="status">
          {statusText(status, pens.length)}
        </p>
        <div ref={plotBox} class="trend-plot-box">
          {pens.length > 0 ? (
            <TrendChart
              pens={pens}
              series={series}
              version={version}
              startMs={startMs}
              stopMs={stopMs}
              formats={formats}
              onRange={fix}
              onCursor={setCursor}
            />
          ) : (
            <p class="notice">Add tags to draw them: up to 8 pens, in at most three units.</p>
          )}
        </div>
        {pens.length > 0 ? (
          <p class="hint">
            Drag across the plot to zoom in, use the wheel to zoom around the cursor, Shift+drag to
            move in time. A band under the plot marks where a pen was not Good (amber Stale, red Bad
            or Unavailable): its line is broken there.
          </p>
        ) : null}
        <ul class="trend-legend" aria-label="Pens">
          {pens.map((pen, index) => {
            const data = store.current.get(pen.path) ?? emptySeries();
            const at = cursor ?? Number.POSITIVE_INFINITY;
            const point = pointAt(data, at);
            const gaps = badSpans(data, stopMs / 1000).length;
            return (
              <li
                key={pen.path}
                class="trend-pen"
                data-path={pen.path}
                data-points={data.times.length}
              >
                <PenSwatch index={index} />
                <span class="trend-pen-name">
                  <span class="tag-path">{pen.path}</span>
                  <span class="muted">
                    {' '}
                    {pen.kind === 'boolean' ? 'On/Off' : pen.unit || '(no unit)'}
                  </span>
                </span>
                <span class="trend-pen-value">
                  {point ? penValue(point.value, pen) : '—'}
                  {point && point.quality !== 'Good' ? (
                    <>
                      {' '}
                      <QualityBadge quality={point.quality} />
                    </>
                  ) : null}
                  {point ? (
                    <span class="muted"> {formats.moment.format(new Date(point.time * 1000))}</span>
                  ) : null}
                </span>
                <span class="muted trend-pen-count">
                  {plural(data.times.length, 'point')}
                  {gaps > 0 ? `, not Good in ${plural(gaps, 'span')}` : ''}
                </span>
                <button
                  type="button"
                  aria-label={`Remove ${pen.path}`}
                  onClick={() => removePen(pen.path)}
                >
                  Remove
                </button>
              </li>
            );
          })}
        </ul>
        <div class="toolbar">
          <button type="button" disabled={pens.length === 0} onClick={() => void exportCsv()}>
            Export CSV
          </button>
          <span class="hint">
            The pens' logged history over the range shown, {describePlan(plan.current)}.
          </span>
        </div>
      </section>
    </div>
  );
}

/** Props of {@link RangeControls}. */
interface RangeControlsProps {
  range: TrendRange;
  selectValue: string;
  startMs: number;
  stopMs: number;
  onPreset(id: string): void;
  onFixed(fromMs: number, toMs: number): void;
}

/** Presets, from/to in the browser's format, zoom and move buttons. */
function RangeControls({
  range,
  selectValue,
  startMs,
  stopMs,
  onPreset,
  onFixed,
}: RangeControlsProps) {
  const [from, setFrom] = useState(toLocalInput(startMs));
  const [to, setTo] = useState(toLocalInput(stopMs));
  const [problem, setProblem] = useState<string | undefined>();
  // The fields follow zoom and pan; while live they show the range as it was chosen.
  const fixedKey = range.kind === 'fixed' ? `${range.fromMs}-${range.toMs}` : range.preset.id;
  useEffect(() => {
    setFrom(toLocalInput(startMs));
    setTo(toLocalInput(stopMs));
    setProblem(undefined);
  }, [fixedKey]);
  return (
    <div class="trend-range">
      <div class="toolbar">
        <label>
          Range{' '}
          <select
            value={selectValue}
            onChange={(event) => onPreset((event.target as HTMLSelectElement).value)}
          >
            {rangePresets.map((preset) => (
              <option key={preset.id} value={preset.id}>
                {preset.label}
              </option>
            ))}
            {range.kind === 'fixed' ? <option value="custom">Custom range</option> : null}
          </select>
        </label>
        <button
          type="button"
          onClick={() => onFixed(...ends(zoomRange(startMs, stopMs, 0.5, 0.5)))}
        >
          Zoom in
        </button>
        <button type="button" onClick={() => onFixed(...ends(zoomRange(startMs, stopMs, 0.5, 2)))}>
          Zoom out
        </button>
        <button type="button" onClick={() => onFixed(...ends(panRange(startMs, stopMs, -0.5)))}>
          Earlier
        </button>
        <button type="button" onClick={() => onFixed(...ends(panRange(startMs, stopMs, 0.5)))}>
          Later
        </button>
        {range.kind === 'fixed' ? (
          <button type="button" onClick={() => onPreset(nearestPreset(stopMs - startMs))}>
            Follow now
          </button>
        ) : null}
      </div>
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          const fromMs = fromLocalInput(from);
          const toMs = fromLocalInput(to);
          if (fromMs === undefined || toMs === undefined) {
            setProblem('Enter both times.');
          } else if (toMs - fromMs < minRangeMs) {
            setProblem('"To" must come after "From".');
          } else if (toMs - fromMs > maxRangeMs) {
            setProblem('A range spans at most 366 days.');
          } else {
            setProblem(undefined);
            onFixed(fromMs, toMs);
          }
        }}
      >
        <label>
          From{' '}
          <input
            type="datetime-local"
            value={from}
            onInput={(event) => setFrom((event.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          To{' '}
          <input
            type="datetime-local"
            value={to}
            onInput={(event) => setTo((event.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Show range</button>
        {problem ? (
          <span class="form-error" role="alert">
            {problem}
          </span>
        ) : null}
      </form>
    </div>
  );
}

function ends(range: { startMs: number; stopMs: number }): [number, number] {
  return [range.startMs, range.stopMs];
}

/** The preset closest in length to a span (Follow now keeps about the zoom chosen). */
function nearestPreset(spanMs: number): string {
  let best = rangePresets[0]?.id ?? '1h';
  let distance = Number.POSITIVE_INFINITY;
  for (const preset of rangePresets) {
    const off = Math.abs(Math.log(preset.seconds * 1000) - Math.log(spanMs));
    if (off < distance) {
      distance = off;
      best = preset.id;
    }
  }
  return best;
}

/** A pen's line in the legend: its colour and dash. */
function PenSwatch({ index }: { index: number }) {
  const dash = penDashes[index % penDashes.length] ?? [];
  return (
    <svg class="trend-swatch" width="28" height="10" viewBox="0 0 28 10" aria-hidden="true">
      <line
        x1="1"
        y1="5"
        x2="27"
        y2="5"
        stroke={penColours[index % penColours.length]}
        stroke-width="3"
        stroke-dasharray={dash.length > 0 ? dash.join(' ') : undefined}
      />
    </svg>
  );
}

function penValue(value: number | null, pen: PenInfo): string {
  if (value === null) return 'no value';
  if (pen.kind === 'boolean') return value >= 0.5 ? 'On' : 'Off';
  const text = String(Number(value.toFixed(3)));
  return pen.unit ? `${text} ${pen.unit}` : text;
}

function describePlan(plan: QueryPlan): string {
  return plan.mode === 'Raw'
    ? 'raw (every logged sample)'
    : `averages of ${windowWords(plan.windowSeconds)} windows (booleans: On if On at any time in the window)`;
}

function statusText(status: Status, pens: number): string {
  switch (status.kind) {
    case 'idle':
      return pens === 0 ? 'No pens yet.' : '';
    case 'loading':
      return 'Loading history…';
    case 'not-configured':
      return 'History is not configured on this gateway: the trend shows live values from when it was opened.';
    case 'error':
      return `History could not be read: ${status.message}`;
    case 'loaded': {
      const what =
        status.plan.mode === 'Raw'
          ? `Logged raw: ${plural(status.points, 'sample')}.`
          : `Averages of ${windowWords(status.plan.windowSeconds)} windows: ${plural(status.points, 'value')}.`;
      return status.fellBack ? `${what} (Too many raw samples for one answer: aggregated.)` : what;
    }
  }
}

function plural(count: number, noun: string): string {
  return `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`;
}
