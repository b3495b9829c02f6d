/**
 * The write port: what the TagWriter (`tag-writer.ts`) needs from a driver that can write,
 * declared here on the writer's side so that the arrow points from the drivers to the tags
 * (DESIGN §8, "Ports belong to their consumer"). The driver contract (`drivers/driver.ts`)
 * extends it; a driver that cannot write leaves its methods out.
 */
import type { TagValue } from './sample.js';

/** What the TagWriter calls on the owner of writable tags (a driver). */
export interface TagWritePort {
  /** Component name: the first segment of every tag the driver writes. */
  readonly name: string;
  /**
   * The tags the profile lets clients write, with what a value must be (drivers that cannot
   * write leave this out). Read by the TagWriter once the driver has started.
   */
  writableTags?(): readonly WritableTag[];
  /**
   * For a driver whose tags come and go while it runs (a Sparkplug host learns them from the
   * edges' births): calls `listener` whenever {@link writableTags} would answer differently, so
   * the TagWriter routes the new list. Optional; returns the function that unsubscribes.
   */
  onWritableTagsChanged?(listener: () => void): () => void;
  /**
   * Checks that need the device but write nothing (an OPC UA node's DataType, read once and
   * cached), for values that passed {@link WritableTag.check}: one message per request that
   * cannot be written, undefined for the others. Optional; a request it refuses is never
   * written, and neither is any other of the same client request.
   */
  checkWrites?(requests: readonly WriteRequest[]): Promise<(string | undefined)[]>;
  /**
   * Writes values to the device, in order, each once: never retried, whatever happens. Resolves
   * with one result per request once the device acknowledged or refused each (or its answer
   * could not come). A Good write makes the driver read the tag back at once, so the new value
   * reaches the store without waiting for the next poll.
   */
  write?(requests: readonly WriteRequest[]): Promise<WriteResult[]>;
}

/**
 * A value as a client sends it: a number, boolean or string (a 64-bit integer at or beyond
 * ±2^53 as its decimal string, since a JSON number cannot hold it exactly).
 */
export type WriteValue = TagValue;

/** One tag the profile marks writable. */
export interface WritableTag {
  fullTagId: string;
  /** Least value a client may write, engineering units (after scaling). Default: none. */
  writeMin?: number;
  /** Greatest value a client may write, engineering units. Default: none. */
  writeMax?: number;
  /**
   * Whether the owning driver's `allowWrites` master switch is on (default false in every
   * profile): off, every write to the tag is refused before any I/O.
   */
  allowWrites: boolean;
  /**
   * Whether `value` fits the tag (JSON type, range of the device type, string length): a
   * message naming what is wrong, or undefined. Runs before any I/O; NaN and infinities are
   * refused before it is called.
   * @param numberText a number `value` as the client spelt it, when known (see
   *   {@link WriteRequest.numberText}).
   */
  check(value: WriteValue, numberText?: string): string | undefined;
}

/** One value to write, already checked. */
export interface WriteRequest {
  fullTagId: string;
  value: WriteValue;
  /**
   * When `value` is a number: its JSON text as the client sent it, which JSON parsing may have
   * rounded (`9007199254740993` arrives as 9007199254740992). Integer checks compare the two and
   * refuse a value that is not the number written. Absent when not known.
   */
  numberText?: string;
}

/**
 * What happened to one write: `Good` the device acknowledged it; `Bad` it was refused or never
 * sent (no change on the device); `Uncertain` the request went out and no answer came, so the
 * device may or may not have applied it (reason `OutcomeUnknown`; it is never re-sent).
 */
export type WriteStatus = 'Good' | 'Bad' | 'Uncertain';

/** Why a write is not Good. */
export type WriteReason =
  /** The request was sent and its answer never came (timeout, connection lost meanwhile). */
  | 'OutcomeUnknown'
  /** The driver had no connection: nothing was sent. */
  | 'Disconnected'
  /** Nothing was written: a request the write needed first (a read) was not answered. */
  | 'Timeout'
  /** The device answered with an exception (Modbus); the message names it. */
  | 'DeviceException'
  /** The device's answer did not fit the request. */
  | 'DecodeError'
  /** The driver cannot write this value (a type it does not handle). */
  | 'NotSupported'
  /** An OPC UA status code name, e.g. `BadNotWritable`, `BadTypeMismatch`. */
  | `Bad${string}`
  | `Uncertain${string}`;

/** The answer to one {@link WriteRequest}. */
export interface WriteResult {
  status: WriteStatus;
  reason?: WriteReason;
  /** Human-readable detail, safe for clients. */
  message?: string;
}
