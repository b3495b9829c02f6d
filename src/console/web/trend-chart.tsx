import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { type TimeFormats, timeAxisLabels } from './time-axis';
import {
  type AxisGroup,
  axisGroups,
  type PenInfo,
  penColours,
  penDashes,
  scaleOf,
} from './trend-pens';
import { zoomRange } from './trend-range';
import { alignSeries, badSpans, isolatedIndices, type PenSeries, valueRange } from './trend-series';

/** Props of {@link TrendChart}. */
export interface TrendChartProps {
  pens: readonly PenInfo[];
  /** The pens' points, in the order of `pens`; read when `version` changes. */
  series: () => readonly PenSeries[];
  /** Bumped whenever the series changed (a load, a live batch). */
  version: number;
  /** The time range shown, epoch ms. */
  startMs: number;
  stopMs: number;
  formats: TimeFormats;
  /** A zoom or pan ended on this range (epoch ms). */
  onRange(startMs: number, stopMs: number): void;
  /** The time under the cursor (epoch s), or undefined when it left the plot. */
  onCursor(seconds: number | undefined): void;
}

/** Height of the plot, CSS px: less on a phone. */
function chartHeight(): number {
  return window.innerWidth < 760 ? 260 : 380;
}

/** A theme colour, read when drawn so a theme change recolours the chart at its next draw. */
function themeColour(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/**
 * The trend's plot (uPlot on a canvas): one line per pen in its colour and dash, booleans as
 * steps, one y axis per unit (the first on the left, the others on the right), the time axis in
 * the browser's language, and under the plot a band per pen where its quality was not Good
 * (amber Stale, red Bad or Unavailable), the line broken there. Drag across the plot to zoom to
 * that span; the wheel zooms around the cursor; Shift+drag pans. Redraws only when the data
 * version or the range changes, so live batches cost one alignment per frame at most.
 */
export function TrendChart({
  pens,
  series,
  version,
  startMs,
  stopMs,
  formats,
  onRange,
  onCursor,
}: TrendChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | undefined>(undefined);
  // Read by the chart's hooks, which outlive a render.
  const latest = useRef({
    series,
    onRange,
    onCursor,
    formats,
    startMs,
    stopMs,
    isolated: [] as number[][],
  });
  latest.current = { ...latest.current, series, onRange, onCursor, formats, startMs, stopMs };
  const shape = pens.map((pen) => `${pen.path}|${scaleOf(pen)}`).join('\n');

  useEffect(() => {
    const element = host.current;
    if (!element || pens.length === 0) return;
    const groups = axisGroups(pens);
    // A phone has room for one y axis: the others' values are read in the legend.
    const narrow = element.clientWidth < 520;
    const axisOf = (group: AxisGroup, index: number): uPlot.Axis => ({
      show: index === 0 || !narrow,
      scale: group.scale,
      side: index === 0 ? 3 : 1,
      label: group.label,
      labelSize: 20,
      size: 56,
      stroke: () => themeColour('--text', '#1b1f24'),
      grid:
        index === 0
          ? { stroke: () => themeColour('--line', '#d0d7de'), width: 1 }
          : { show: false },
      ticks: { stroke: () => themeColour('--line', '#d0d7de'), width: 1 },
      ...(group.kind === 'boolean'
        ? {
            splits: () => [0, 1],
            values: (_chart: uPlot, splits: number[]) =>
              splits.map((value) => (value === 1 ? 'On' : 'Off')),
          }
        : {}),
    });
    const scales: uPlot.Scales = {
      // Set by the page (setScale), never from the data: the range chosen is the range shown.
      x: { time: true, auto: false },
    };
    for (const group of groups) {
      scales[group.scale] =
        group.kind === 'boolean'
          ? { range: [-0.1, 1.1] }
          : { range: (_chart, min, max) => valueRange(min, max) };
    }
    let dragFrom: { x: number; startMs: number; stopMs: number } | undefined;
    let drawStarted = 0;
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: chartHeight(),
        scales,
        legend: { show: false },
        cursor: {
          drag: { x: true, y: false, setScale: false },
          points: { show: false },
        },
        series: [
          {},
          ...pens.map(
            (pen, index): uPlot.Series => ({
              label: pen.path,
              scale: scaleOf(pen),
              stroke: penColours[index % penColours.length],
              dash: penDashes[index % penDashes.length],
              width: 2,
              spanGaps: false,
              ...(pen.kind === 'boolean' ? { paths: uPlot.paths.stepped?.({ align: 1 }) } : {}),
              points: {
                size: 6,
                // Sparse data shows its points; dense data at least the lone values between gaps.
                filter: (_chart, seriesIndex, show) =>
                  show ? null : (latest.current.isolated[seriesIndex - 1] ?? null),
              },
            }),
          ),
        ],
        axes: [
          {
            stroke: () => themeColour('--text', '#1b1f24'),
            // Room for "14:35:20" or "2:35:20 PM" between ticks.
            space: 90,
            grid: { stroke: () => themeColour('--line', '#d0d7de'), width: 1 },
            ticks: { stroke: () => themeColour('--line', '#d0d7de'), width: 1 },
            values: (_chart, splits, _axis, _space, increment) => {
              const labels = timeAxisLabels(splits, increment, latest.current.formats);
              // The labels drawn on the canvas, readable in the page (tests, tools).
              element.dataset.timeTicks = JSON.stringify(labels);
              return labels;
            },
          },
          ...groups.map(axisOf),
        ],
        hooks: {
          setSelect: [
            (self) => {
              const { left, width } = self.select;
              if (width < 3) return;
              const from = self.posToVal(left, 'x') * 1000;
              const to = self.posToVal(left + width, 'x') * 1000;
              self.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
              latest.current.onRange(Math.round(from), Math.round(to));
            },
          ],
          setCursor: [
            (self) => {
              const left = self.cursor.left ?? -1;
              latest.current.onCursor(left < 0 ? undefined : self.posToVal(left, 'x'));
            },
          ],
          drawClear: [
            () => {
              drawStarted = performance.now();
            },
          ],
          draw: [
            (self) => {
              drawQualityBands(self, latest.current.series(), latest.current.stopMs / 1000);
              // The last redraw's cost, ms, readable in the page (the tests log it).
              element.dataset.drawMs = (performance.now() - drawStarted).toFixed(1);
            },
          ],
        },
      },
      [[]],
      element,
    );
    chart.current = plot;
    element.dataset.axes = JSON.stringify(groups.map((group) => group.label));
    element.dataset.axesDrawn = String(narrow ? 1 : groups.length);

    // Wheel: zoom around the cursor; the range is committed once the wheel rests.
    let wheelTimer: ReturnType<typeof setTimeout> | undefined;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const x = plot.scales.x;
      if (x?.min == null || x.max == null) return;
      const at = event.offsetX / plot.over.clientWidth;
      const next = zoomRange(x.min * 1000, x.max * 1000, at, event.deltaY < 0 ? 0.8 : 1.25);
      latest.current.startMs = next.startMs;
      latest.current.stopMs = next.stopMs;
      plot.setScale('x', { min: next.startMs / 1000, max: next.stopMs / 1000 });
      clearTimeout(wheelTimer);
      wheelTimer = setTimeout(() => latest.current.onRange(next.startMs, next.stopMs), 300);
    };
    // Shift+drag: pan.
    const onDown = (event: MouseEvent) => {
      if (!event.shiftKey) return;
      event.preventDefault();
      event.stopPropagation();
      dragFrom = {
        x: event.clientX,
        startMs: latest.current.startMs,
        stopMs: latest.current.stopMs,
      };
    };
    const onMove = (event: MouseEvent) => {
      if (!dragFrom) return;
      const span = dragFrom.stopMs - dragFrom.startMs;
      const shift = -((event.clientX - dragFrom.x) / plot.over.clientWidth) * span;
      latest.current.startMs = dragFrom.startMs + shift;
      latest.current.stopMs = dragFrom.stopMs + shift;
      plot.setScale('x', { min: latest.current.startMs / 1000, max: latest.current.stopMs / 1000 });
    };
    const onUp = () => {
      if (!dragFrom) return;
      dragFrom = undefined;
      latest.current.onRange(Math.round(latest.current.startMs), Math.round(latest.current.stopMs));
    };
    plot.over.addEventListener('wheel', onWheel, { passive: false });
    plot.over.addEventListener('mousedown', onDown, { capture: true });
    window.addEventListener('mousemove', onMove);
    window.addEventListener('mouseup', onUp);
    // Follows the panel's width (a rotated phone, a resized window).
    const follow = new ResizeObserver(() => {
      if (host.current)
        plot.setSize({ width: Math.max(280, host.current.clientWidth), height: chartHeight() });
    });
    follow.observe(element);
    // A theme change recolours axes and grid at the next draw.
    const themeWatch = new MutationObserver(() => plot.redraw(false));
    themeWatch.observe(document.documentElement, {
      attributes: true,
      attributeFilter: ['data-theme'],
    });
    return () => {
      clearTimeout(wheelTimer);
      window.removeEventListener('mousemove', onMove);
      window.removeEventListener('mouseup', onUp);
      follow.disconnect();
      themeWatch.disconnect();
      plot.destroy();
      chart.current = undefined;
      delete element.dataset.timeTicks;
    };
  }, [shape]);

  useEffect(() => {
    const plot = chart.current;
    const element = host.current;
    if (!plot || !element) return;
    const started = performance.now();
    const all = series();
    const aligned = alignSeries(all);
    latest.current.isolated = aligned.slice(1).map((column) => isolatedIndices(column));
    plot.batch(() => {
      plot.setData(aligned as uPlot.AlignedData, false);
      plot.setScale('x', { min: startMs / 1000, max: stopMs / 1000 });
    });
    element.dataset.points = JSON.stringify(all.map((pen) => pen.times.length));
    // Alignment and redraw of a data change, ms (uPlot draws within the batch).
    element.dataset.updateMs = (performance.now() - started).toFixed(1);
    element.dataset.xRange = `${Math.round(startMs)},${Math.round(stopMs)}`;
  }, [version, startMs, stopMs, shape]);

  return <div ref={host} class="chart trend-plot" data-testid="trend-plot" />;
}

/** Bands under the plot where a pen's quality is not Good: amber Stale, red Bad/Unavailable. */
function drawQualityBands(plot: uPlot, pens: readonly PenSeries[], endSeconds: number): void {
  const { ctx, bbox } = plot;
  const ratio = devicePixelRatio || 1;
  const height = 4 * ratio;
  const stale = themeColour('--stale', '#7a4a00');
  const bad = themeColour('--bad', '#a40e26');
  ctx.save();
  ctx.beginPath();
  ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
  ctx.clip();
  pens.forEach((pen, index) => {
    const top = bbox.top + bbox.height - (index + 1) * (height + ratio);
    for (const span of badSpans(pen, endSeconds)) {
      const from = plot.valToPos(span.from, 'x', true);
      const to = plot.valToPos(span.to, 'x', true);
      ctx.fillStyle = span.quality === 'Stale' ? stale : bad;
      ctx.fillRect(from, top, Math.max(ratio * 2, to - from), height);
    }
  });
  ctx.restore();
}
