/**
 * What a value means, where tagd itself defines it: the status and health tags of its
 * publishers. Shown by colour beside the value, apart from the sample's quality (a Status of
 * `Error` read correctly is a Good sample of bad news).
 */

/** `ok` (On, a delivery that worked), `bad` (Error, a failed delivery), `off` (switched off). */
export type Meaning = 'ok' | 'bad' | 'off';

const healthTag = /^Publishers\/[^/]+\/(Status|LastDeliverySuccess)$/;

/** The meaning of `value` on the tag `path`; undefined where tagd gives the value none. */
export function valueMeaning(path: string, value: unknown): Meaning | undefined {
  const tag = healthTag.exec(path)?.[1];
  if (tag === 'Status') {
    return value === 'On' ? 'ok' : value === 'Error' ? 'bad' : value === 'Off' ? 'off' : undefined;
  }
  if (tag === 'LastDeliverySuccess') {
    return value === true ? 'ok' : value === false ? 'bad' : undefined;
  }
  return undefined;
}
