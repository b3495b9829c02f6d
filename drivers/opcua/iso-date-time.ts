/**
 * An ISO 8601 date and time as a client writes it to an OPC UA DateTime, read exactly. Date.parse
 * is lenient where a write must not be: it rolls `2024-02-30` over to 1 March, and takes years
 * before 1601 that OPC UA's DateTime (100 ns ticks since 1601-01-01 UTC) cannot hold (node-opcua
 * then sends a negative tick count that the server reads as year 59955). Here each component is
 * checked by a round trip: the instant they name, read back in the same frame (the given offset,
 * or local time), must give the same components, or the text names no instant.
 */

/** The earliest instant written: 1601-01-01T00:00:00Z, tick 0 of OPC UA's DateTime. */
const earliest = Date.UTC(1601, 0, 1);
/** The latest millisecond written: 9999-12-31T23:59:59.999Z (four-digit years). */
const latest = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * `YYYY-MM-DDThh:mm[:ss[.fraction]][Z|±hh:mm]`; the fraction takes `.` or `,`. No offset means
 * the gateway's local time, as in ECMAScript's date format.
 */
const pattern =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2}))?$/;

/** A Date with node-opcua's sub-millisecond part (`picoseconds`, encoded in 100 ns steps). */
export type PreciseDate = Date & { picoseconds?: number };

/**
 * The instant `text` names, to OPC UA's 100 ns: a Date for the milliseconds, and `picoseconds`
 * for the 100 ns steps below them when the fraction has more than three digits. A message when
 * `text` is not such a date and time, names a day or time that does not exist (30 February,
 * 24:00, a leap second, a local time skipped by a daylight-saving change), lies outside
 * 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z, or is finer than 100 ns.
 */
export function parseIsoDateTime(text: string): PreciseDate | string {
  const match = pattern.exec(text);
  if (match === null)
    return 'must be an ISO 8601 date and time, e.g. 2026-01-02T03:04:05Z or 2026-01-02T04:04:05+01:00';
  const [, y, mo, d, h, mi, s = '0', fraction = '', zone, sign, zh = '0', zm = '0'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as number[];
  // Nine digits at most: milliseconds, then 100 ns steps, then two that must be zero.
  const digits = fraction.padEnd(9, '0');
  if (!/^0*$/.test(digits.slice(7))) return 'is finer than 100 ns, which OPC UA cannot hold';
  const millisecond = Number(digits.slice(0, 3));
  const ticks = Number(digits.slice(3, 7));
  let time: number;
  if (zone === undefined) {
    const local = new Date(2000, 0, 1);
    local.setFullYear(year as number, (month as number) - 1, day);
    local.setHours(hour as number, minute, second, millisecond);
    time = local.getTime();
    const back = [
      local.getFullYear(),
      local.getMonth() + 1,
      local.getDate(),
      local.getHours(),
      local.getMinutes(),
      local.getSeconds(),
    ];
    if (!same(back, [year, month, day, hour, minute, second]))
      return 'is not a date and time that exists (in the gateway’s time zone)';
  } else {
    if (Number(zh) > 23 || Number(zm) > 59) return 'has an offset that is not ±00:00 to ±23:59';
    const offsetMinutes =
      zone === 'Z' ? 0 : (sign === '-' ? -1 : 1) * (Number(zh) * 60 + Number(zm));
    const utc = new Date(0);
    utc.setUTCFullYear(year as number, (month as number) - 1, day);
    utc.setUTCHours(hour as number, minute, second, millisecond);
    const back = [
      utc.getUTCFullYear(),
      utc.getUTCMonth() + 1,
      utc.getUTCDate(),
      utc.getUTCHours(),
      utc.getUTCMinutes(),
      utc.getUTCSeconds(),
    ];
    if (!same(back, [year, month, day, hour, minute, second]))
      return 'is not a date and time that exists';
    time = utc.getTime() - offsetMinutes * 60_000;
  }
  if (time < earliest || time > latest)
    return 'is outside the range of an OPC UA DateTime (1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z)';
  const date: PreciseDate = new Date(time);
  if (ticks > 0) date.picoseconds = ticks * 100_000;
  return date;
}

function same(a: readonly number[], b: readonly (number | undefined)[]): boolean {
  return a.every((value, index) => value === b[index]);
}
