/**
 * The Logging modes every publisher shares (spec §2.4): what a publish carries. The selectors
 * of `selection.ts` implement them, for the webhook and the MQTT publisher alike.
 */

/** Logging modes, in the spec's words: `Snapshot`, `On Change`, `Everything`. */
export const loggingModes = ['Snapshot', 'On Change', 'Everything'] as const;
/** A logging mode. */
export type LoggingMode = (typeof loggingModes)[number];
