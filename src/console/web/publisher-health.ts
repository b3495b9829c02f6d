import type { Sample } from './api-types';

/**
 * A publisher's delivery health in words, from its health tags LastDeliverySuccess and
 * LastDeliveryError (spec §2.4): what a person reads instead of `true`/`false`.
 */
export function healthWords(success?: Sample, error?: Sample): string {
  if (success === undefined) return 'Unknown (health tags not readable)';
  if (success.quality !== 'Good' && success.quality !== 'Stale') return 'No delivery yet';
  if (success.value === true) return 'Delivering';
  if (success.value === false) {
    return error?.value ? `Failing: ${String(error.value)}` : 'Last delivery failed';
  }
  return 'No delivery yet';
}
