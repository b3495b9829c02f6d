/**
 * A Sparkplug publisher's store-and-forward in words for its card on the Publishers page, from
 * `state.sparkplug` (docs/sparkplug-store-and-forward.md): whether the primary host is online
 * and since when, what is stored while it is not, and the catch-up after it came back.
 */
import type { MqttPublisher } from './api-types.js';

/** The number and time formats of one locale and time zone. */
export interface SparkplugFormats {
  /** Sample counts: 12,345 (en), 12.345 (de). */
  count: Intl.NumberFormat;
  /** A time of today: 08:02 (de), 8:02 AM (en-US). */
  time: Intl.DateTimeFormat;
  /** A time of another day: 26.11.26, 08:02. */
  dayTime: Intl.DateTimeFormat;
  /** The day alone, to tell today from another day. */
  day: Intl.DateTimeFormat;
}

/**
 * The formats of `locale` (default: the runtime's, which in a browser is its language).
 * @param timeZone an IANA zone; default the runtime's (the browser's).
 */
export function sparkplugFormats(locale?: string, timeZone?: string): SparkplugFormats {
  const zone = timeZone ? { timeZone } : {};
  return {
    count: new Intl.NumberFormat(locale),
    time: new Intl.DateTimeFormat(locale, { timeStyle: 'short', ...zone }),
    dayTime: new Intl.DateTimeFormat(locale, { dateStyle: 'short', timeStyle: 'short', ...zone }),
    day: new Intl.DateTimeFormat(locale, { dateStyle: 'short', ...zone }),
  };
}

/**
 * The store-and-forward of a running Sparkplug publisher with a `primaryHostId`, a line each:
 * "Primary host 'central' offline since 08:02 — storing: 12,345 samples", "Catching up: 3,210
 * stored samples left, 9,135 forwarded (primary host 'central' online since 08:14)", "Primary
 * host 'central' online since 08:14", then stored samples dropped from a full outbox, if any.
 * Empty for any other publisher (or one not running: its state has no `sparkplug`).
 * @param now epoch ms, to write a time of today without its date.
 */
export function storeAndForwardWords(
  publisher: MqttPublisher,
  now: number,
  formats: SparkplugFormats = sparkplugFormats(),
): string[] {
  const { state } = publisher;
  const sparkplug = state.sparkplug;
  if (sparkplug?.primaryHostOnline === undefined) return [];
  const host = `'${publisher.primaryHostId ?? '?'}'`;
  const since = sinceText(sparkplug.primaryHostSince, now, formats);
  const stored = formats.count.format(sparkplug.storedSamples ?? 0);
  const lines: string[] = [];
  if (!sparkplug.primaryHostOnline) {
    lines.push(`Primary host ${host} offline${since} — storing: ${stored} samples`);
  } else if (sparkplug.catchingUp) {
    const forwarded = formats.count.format(sparkplug.forwardedSamples ?? 0);
    lines.push(
      `Catching up: ${stored} stored samples left, ${forwarded} forwarded (primary host ${host} online${since})`,
    );
  } else if (!state.connected) {
    // The broker is away: the host's last STATE is all the publisher knows of it.
    lines.push(
      `Broker not connected — storing: ${stored} samples (primary host ${host} was online${since})`,
    );
  } else {
    lines.push(`Primary host ${host} online${since}`);
  }
  const dropped = sparkplug.droppedSamples ?? 0;
  if (dropped > 0) {
    lines.push(`${formats.count.format(dropped)} stored samples dropped: the outbox was full`);
  }
  return lines;
}

/** " since 08:02" (today) or " since 26.11.26, 08:02"; empty when the time is unknown. */
function sinceText(iso: string | undefined, now: number, formats: SparkplugFormats): string {
  if (iso === undefined) return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  const today = formats.day.format(at) === formats.day.format(new Date(now));
  return ` since ${(today ? formats.time : formats.dayTime).format(at)}`;
}
