/**
 * The memory the configuration routes' large request bodies may hold together. Those routes
 * take bodies of up to 16 MiB (json-bodies.ts, `configurationBodyBytes`), and the JSON they
 * parse into takes several times that on the heap; an account allowed to call them (or a stolen
 * token of one) opening many uploads at once could otherwise make the daemon buffer 16 MiB per
 * connection slot, 4 GiB at the default 256 slots: enough to have the kernel kill the daemon and
 * every driver with it. So a large-limit route reserves its body's size here before reading it
 * (the declared Content-Length, or the whole limit when the length is not known in advance: a
 * chunked or compressed body) and gives it back when its answer has gone; a body that does not
 * fit is refused at once with 503 `busy` and `Retry-After`, unread. Routes with the default
 * 256 KiB limit are not counted: at most 64 MiB at the default slot count.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Bytes the large request bodies being read and handled at once may reserve together: 64 MiB. */
export const largeBodyBudgetBytes = 64 * 1024 * 1024;

/**
 * Bytes to reserve for a body read with a limit of `limitBytes`: its declared Content-Length
 * (at most the limit: a longer one is refused with 413 before a byte is read), or the limit when
 * the body is chunked or has a Content-Encoding (the limit applies to the decoded bytes, which
 * the declared length does not tell).
 */
export function bodyReservationBytes(headers: IncomingHttpHeaders, limitBytes: number): number {
  const encoding = headers['content-encoding']?.trim().toLowerCase();
  const declared = headers['content-length'];
  if ((encoding && encoding !== 'identity') || declared === undefined || !/^\d+$/.test(declared)) {
    return limitBytes;
  }
  return Math.min(Number(declared), limitBytes);
}

/** A reservation of bytes; its release may be called any number of times. */
export type BodyReservation = () => void;

/** A budget of bytes shared by the large bodies being read and handled. */
export class LargeBodyBudget {
  private reserved = 0;

  /** @param totalBytes - what the reservations may hold together; default {@link largeBodyBudgetBytes}. */
  constructor(readonly totalBytes = largeBodyBudgetBytes) {}

  /** Bytes reserved now. */
  get reservedBytes(): number {
    return this.reserved;
  }

  /**
   * Reserves `bytes`, or answers undefined when they do not fit beside the reservations held
   * (a body larger than the whole budget never fits).
   */
  tryReserve(bytes: number): BodyReservation | undefined {
    if (this.reserved + bytes > this.totalBytes) return undefined;
    this.reserved += bytes;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.reserved -= bytes;
    };
  }
}

/** The one budget of this process: every listener's API (loopback, plant network, extensions). */
export const largeBodyBudget = new LargeBodyBudget();
