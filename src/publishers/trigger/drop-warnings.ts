/**
 * The warning about updates an Everything buffer dropped because it was full: logged once a
 * tick at most, with the count since the previous warning, so a flood of updates gives one
 * line per publish instead of one per dropped update.
 */
import type { Logger } from 'pino';
import type { PublisherCounters } from '../publisher.js';

export class DropWarnings {
  private droppedAtLastTick = 0;

  /** @param counters the publisher's counters, whose droppedSamples the selector increments */
  constructor(
    private readonly counters: PublisherCounters,
    private readonly log: Logger,
  ) {}

  /** At start: drops counted before (an earlier run) are not warned about again. */
  restart(): void {
    this.droppedAtLastTick = this.counters.droppedSamples;
  }

  /**
   * At a tick: warns about the updates dropped since the last warning, if any.
   * @param bufferSize the Everything buffer's size (everythingBufferSize), updates
   */
  tick(bufferSize: number): void {
    const dropped = this.counters.droppedSamples - this.droppedAtLastTick;
    if (dropped === 0) return;
    this.droppedAtLastTick = this.counters.droppedSamples;
    this.log.warn(
      { dropped, bufferSize },
      `Everything buffer full: the ${dropped} oldest updates were dropped since the last ` +
        `publish (the buffer holds ${bufferSize}).`,
    );
  }
}
