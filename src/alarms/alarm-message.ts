/**
 * The text of an alarm: the definition's `message` template, or a sentence naming the
 * condition, with `{name}`, `{value}`, `{limit}` and `{unit}` filled in.
 */
import type { TagValue } from '../tags/sample.js';
import type { AlarmCondition } from './alarm-schema.js';

const defaults: Readonly<Record<AlarmCondition, string>> = {
  High: '{name}: {value} {unit} is above the high limit {limit} {unit}.',
  HighHigh: '{name}: {value} {unit} is above the high-high limit {limit} {unit}.',
  Low: '{name}: {value} {unit} is below the low limit {limit} {unit}.',
  LowLow: '{name}: {value} {unit} is below the low-low limit {limit} {unit}.',
  Deviation: '{name}: {value} {unit} is more than {limit} {unit} away from its setpoint.',
  RateOfChange: '{name}: changing by {value} {unit}/s, more than {limit} {unit}/s.',
  Digital: '{name}: the source is {value}.',
  BadQuality: '{name}: the source is {value}.',
  Expression: '{name}: the condition holds.',
};

/** The template of a definition: its own `message`, or the condition's default. */
export function messageTemplate(condition: AlarmCondition, message: string | undefined): string {
  return message ?? defaults[condition];
}

/** What fills a template's placeholders. */
export interface MessageValues {
  name: string;
  value: TagValue | undefined;
  limit: TagValue | undefined;
  unit: string | undefined;
}

/**
 * Fills a template. A placeholder without a value becomes `?` (`{unit}` and the space before
 * it disappear); numbers are shown with at most 6 significant digits.
 */
export function renderMessage(template: string, values: MessageValues): string {
  // Without a unit, the space before {unit} goes too: "5 {unit}/s" reads "5/s".
  const unit = values.unit ?? '';
  const text = unit === '' ? template.replace(/ ?\{unit\}/g, '') : template;
  return text.replace(/\{(name|value|limit|unit)\}/g, (_match, key: string) => {
    switch (key) {
      case 'name':
        return values.name;
      case 'unit':
        return unit;
      case 'value':
        return show(values.value);
      default:
        return show(values.limit);
    }
  });
}

function show(value: TagValue | undefined): string {
  if (value === undefined) return '?';
  if (typeof value === 'number') return String(Number(value.toPrecision(6)));
  return String(value);
}
