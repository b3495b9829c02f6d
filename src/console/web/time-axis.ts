/**
 * Times on the history chart in the viewer's language: the labels of the time axis (uPlot's
 * `axes[0].values`), the time in its legend, the range above it and the times of a list of
 * logged values, all from `Intl.DateTimeFormat` of the browser's locale. A German browser reads
 * 14:35 and 27.11., an American one 2:35 PM and 11/27 (uPlot's own labels are English only:
 * "2:35pm 11/27/26").
 */

const secondsPerDay = 86_400;

/** The formats of one locale and time zone. */
export interface TimeFormats {
  /** An axis label a minute or less apart: 14:35:20 (de), 2:35:20 PM (en-US). */
  seconds: Intl.DateTimeFormat;
  /** An axis label minutes or hours apart: 14:35, 2:35 PM. */
  minutes: Intl.DateTimeFormat;
  /** An axis label days apart, or the day under a time: 27.11., 11/27. */
  dayMonth: Intl.DateTimeFormat;
  /** An axis label months apart: Nov. 2026, Nov 2026. */
  monthYear: Intl.DateTimeFormat;
  /** An axis label years apart: 2026. */
  year: Intl.DateTimeFormat;
  /** One end of the chart's range: 27.11.2026, 14:35. */
  rangeEnd: Intl.DateTimeFormat;
  /** A sample's time (legend, list of values): 27.11.2026, 14:35:20. */
  moment: Intl.DateTimeFormat;
}

/**
 * The formats of `locale` (default: the runtime's, which in a browser is its language).
 * @param timeZone an IANA zone; default the runtime's (the browser's), as uPlot places its ticks.
 */
export function timeFormats(locale?: string, timeZone?: string): TimeFormats {
  const make = (options: Intl.DateTimeFormatOptions) =>
    new Intl.DateTimeFormat(locale, timeZone ? { ...options, timeZone } : options);
  return {
    seconds: make({ timeStyle: 'medium' }),
    minutes: make({ timeStyle: 'short' }),
    dayMonth: make({ day: 'numeric', month: 'numeric' }),
    monthYear: make({ month: 'short', year: 'numeric' }),
    year: make({ year: 'numeric' }),
    rangeEnd: make({ dateStyle: 'medium', timeStyle: 'short' }),
    moment: make({ dateStyle: 'medium', timeStyle: 'medium' }),
  };
}

/**
 * The labels of a time axis: the time alone while ticks are less than a day apart (with the day
 * on a second line at the first tick and wherever the day changes), the day, month or year
 * when they are further apart.
 * @param splits tick times, epoch seconds (uPlot's unit).
 * @param incrementSeconds the time between two ticks, seconds.
 */
export function timeAxisLabels(
  splits: readonly number[],
  incrementSeconds: number,
  formats: TimeFormats,
): string[] {
  let previousDay: string | undefined;
  return splits.map((seconds) => {
    const date = new Date(seconds * 1000);
    if (incrementSeconds >= 365 * secondsPerDay) return formats.year.format(date);
    if (incrementSeconds >= 28 * secondsPerDay) return formats.monthYear.format(date);
    if (incrementSeconds >= secondsPerDay) return formats.dayMonth.format(date);
    const time = (incrementSeconds < 60 ? formats.seconds : formats.minutes).format(date);
    const day = formats.dayMonth.format(date);
    const label = day === previousDay ? time : `${time}\n${day}`;
    previousDay = day;
    return label;
  });
}

/** A chart's range as text: "27.11.2026, 13:35 – 28.11.2026, 13:35" (epoch ms). */
export function rangeText(startMs: number, stopMs: number, formats: TimeFormats): string {
  return `${formats.rangeEnd.format(new Date(startMs))} – ${formats.rangeEnd.format(new Date(stopMs))}`;
}
