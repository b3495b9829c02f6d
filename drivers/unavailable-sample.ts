/**
 * What a driver writes for a tag it has no fresh value for (connection lost, driver stopped):
 * quality Unavailable, reason Disconnected, the message saying why. The last value is not
 * repeated: a value the device did not send now is never reported.
 */
import type { Sample, SampleMetadata } from '../src/tags/sample.js';

/** Message of the samples a stopped driver leaves its tags with. */
export const driverStoppedMessage = 'The driver is stopped.';

/**
 * The Unavailable sample of one of a driver's tags.
 * @param tag the tag's id and the metadata it was declared with (kept on the sample)
 * @param utcTimestamp when the value stopped coming, ISO 8601 UTC
 * @param message why, for the operator
 */
export function unavailableSample(
  tag: { readonly fullTagId: string; readonly metadata?: SampleMetadata | undefined },
  utcTimestamp: string,
  message: string,
): Sample {
  return {
    fullTagId: tag.fullTagId,
    utcTimestamp,
    quality: 'Unavailable',
    reason: 'Disconnected',
    message,
    ...(tag.metadata ? { metadata: tag.metadata } : {}),
  };
}
