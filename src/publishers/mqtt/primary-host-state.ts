/**
 * The Primary Host Application's STATE as an edge node follows it (Sparkplug 3.0): the retained
 * JSON `{"online": boolean, "timestamp": epoch ms}` on `spBv1.0/STATE/<hostId>`. A host
 * publishes its birth `online: true` and registers as its Will `online: false` with the same
 * timestamp, so a message whose timestamp is older than the last one seen is stale (a retained
 * message of an earlier session arriving late) and ignored; an equal one is not.
 */
import { sparkplugNamespace } from './sparkplug-payloads.js';

/** The STATE topic of a host id. */
export function stateTopic(hostId: string): string {
  return `${sparkplugNamespace}/STATE/${hostId}`;
}

/** A STATE payload read, or why it was not. */
export type StateMessage = { online: boolean; timestamp: number } | { problem: string };

/** Reads a STATE payload; anything but the 3.0 JSON shape is a problem. */
export function parseState(payload: Uint8Array): StateMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    return { problem: 'the payload is not JSON (a Sparkplug 2.x "ONLINE"/"OFFLINE" text?)' };
  }
  const { online, timestamp } = (parsed ?? {}) as { online?: unknown; timestamp?: unknown };
  if (typeof online !== 'boolean') return { problem: '"online" is not a boolean' };
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) {
    return { problem: '"timestamp" is not a number' };
  }
  return { online, timestamp };
}

/** What the edge node knows of its primary host. */
export class PrimaryHostState {
  private lastTimestamp = Number.NEGATIVE_INFINITY;
  private isOnline = false;

  /** True after the newest STATE said online; false before any STATE. */
  get online(): boolean {
    return this.isOnline;
  }

  /** Timestamp of the STATE followed, epoch ms; undefined before any. */
  get timestamp(): number | undefined {
    return Number.isFinite(this.lastTimestamp) ? this.lastTimestamp : undefined;
  }

  /**
   * Takes a STATE message.
   * @returns `ignored` for a message older than the last one followed, else whether the host
   *   is online now.
   */
  update(message: { online: boolean; timestamp: number }): 'ignored' | 'online' | 'offline' {
    if (message.timestamp < this.lastTimestamp) return 'ignored';
    this.lastTimestamp = message.timestamp;
    this.isOnline = message.online;
    return message.online ? 'online' : 'offline';
  }
}
