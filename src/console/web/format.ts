/** How values and times are written on screen. */
import type { Sample } from './api-types';

/** A sample's value as text: the label or exact decimal when given, `—` when it has none. */
export function formatValue(sample: Sample | undefined): string {
  if (!sample || sample.value === undefined) return '—';
  if (sample.metadata?.valueText) return sample.metadata.valueText;
  const { value } = sample;
  // Up to 3 decimals, no trailing zeros, no grouping: 4.05 bar, 61.234 °C, 1048576 parts.
  if (typeof value === 'number') return String(Number(value.toFixed(3)));
  return String(value);
}

/** An ISO timestamp in the viewer's local time, to the second. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
