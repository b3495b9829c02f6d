/**
 * The pens of a trend: each one's colour and dash (so pens differ by more than colour), which
 * y axis it is drawn against (one per unit; booleans on an Off/On axis of their own) and which
 * tags may be added. At most {@link maxAxes} axes: a fourth unit would leave a pen whose values
 * cannot be read off any axis, so it is refused with the reason.
 */
import type { Sample } from './api-types.js';
import { maxPens } from './trend-range.js';
import type { PenKind } from './trend-series.js';

/**
 * Pen colours: each at least 3:1 against the panel of every built-in theme (light, dark, high
 * contrast; test/console/trend-pens.test.ts checks it), none red or amber (the quality colours).
 */
export const penColours: readonly string[] = [
  '#1f77b4',
  '#c55a11',
  '#2b8a3e',
  '#7a5cc2',
  '#0f7c8c',
  '#8a6d1d',
  '#5f8f00',
  '#a8479e',
];

/** Dash patterns (CSS px), cycled with the colours: solid, dashed, dotted, dash-dot. */
export const penDashes: readonly number[][] = [[], [8, 4], [2, 3], [10, 3, 2, 3]];

/** Most y axes on one trend. */
export const maxAxes = 3;

/** What the chart needs to know of a pen. */
export interface PenInfo {
  path: string;
  kind: PenKind;
  /** Engineering unit, '' when the tag has none. */
  unit: string;
}

/** A pen from the tag's current sample (its value's type and its unit). */
export function penInfo(path: string, sample: Sample | undefined): PenInfo {
  return {
    path,
    kind: typeof sample?.value === 'boolean' ? 'boolean' : 'number',
    unit: sample?.metadata?.unit ?? '',
  };
}

/** One y axis: the pens of one unit, or the booleans. */
export interface AxisGroup {
  /** uPlot scale key. */
  scale: string;
  /** Axis label: the unit, "On/Off" for booleans, "(no unit)". */
  label: string;
  kind: PenKind;
}

/** The scale a pen is drawn against. */
export function scaleOf(pen: PenInfo): string {
  return pen.kind === 'boolean' ? 'bool' : `unit:${pen.unit}`;
}

/** The axes of a trend's pens, in the order their first pen appears. */
export function axisGroups(pens: readonly PenInfo[]): AxisGroup[] {
  const groups: AxisGroup[] = [];
  for (const pen of pens) {
    const scale = scaleOf(pen);
    if (groups.some((group) => group.scale === scale)) continue;
    groups.push({
      scale,
      kind: pen.kind,
      label: pen.kind === 'boolean' ? 'On/Off' : pen.unit || '(no unit)',
    });
  }
  return groups;
}

/**
 * Why a tag cannot be added to the trend, or undefined when it can: already there, the trend
 * full, a text value (it is listed in the tag's detail, not charted), or a fourth unit.
 */
export function refusal(
  pens: readonly PenInfo[],
  path: string,
  sample: Sample | undefined,
): string | undefined {
  if (pens.some((pen) => pen.path === path)) return `${path} is on the trend already.`;
  if (pens.length >= maxPens) return `A trend holds at most ${maxPens} pens: remove one first.`;
  if (typeof sample?.value === 'string') {
    return `${path} holds text: a trend draws numbers and booleans (its values are listed in its detail on the Tags page).`;
  }
  const groups = axisGroups(pens);
  const candidate = penInfo(path, sample);
  if (groups.length >= maxAxes && !groups.some((group) => group.scale === scaleOf(candidate))) {
    const label = candidate.kind === 'boolean' ? 'On/Off' : candidate.unit || '(no unit)';
    return `A trend has at most ${maxAxes} axes (${groups.map((group) => group.label).join(', ')}): ${path} (${label}) would need a fourth. Remove a pen of another unit first.`;
  }
  return undefined;
}
