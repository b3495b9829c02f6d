/**
 * A bounded first-in first-out buffer over one preallocated array: pushing costs no allocation,
 * and a full buffer overwrites its oldest item, so memory stays fixed however fast items come.
 * Serves the Everything mode of the publishers (webhook and MQTT).
 */
export class RingBuffer<T> {
  private readonly slots: (T | undefined)[];
  /** Index of the oldest item. */
  private head = 0;
  private count = 0;
  private droppedTotal = 0;

  /** @param capacity most items kept, at least 1. */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`A ring buffer needs a capacity of at least 1, not ${capacity}.`);
    }
    // fill() turns the holey array into a packed one, so V8 keeps one fast backing store.
    this.slots = new Array<T | undefined>(capacity).fill(undefined);
  }

  /** Items held. */
  get length(): number {
    return this.count;
  }

  /** Items overwritten because the buffer was full, since it was created. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /**
   * Appends an item; when the buffer is full the oldest item is overwritten.
   * @returns true when an item was dropped to make room.
   */
  push(item: T): boolean {
    const capacity = this.capacity;
    if (this.count < capacity) {
      let index = this.head + this.count;
      if (index >= capacity) index -= capacity;
      this.slots[index] = item;
      this.count++;
      return false;
    }
    this.slots[this.head] = item;
    this.head = this.head + 1 === capacity ? 0 : this.head + 1;
    this.droppedTotal++;
    return true;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const count = this.count;
    const out = new Array<T>(count);
    const slots = this.slots;
    const capacity = this.capacity;
    let index = this.head;
    for (let i = 0; i < count; i++) {
      out[i] = slots[index] as T;
      // Release the reference, so a drained sample can be collected.
      slots[index] = undefined;
      index = index + 1 === capacity ? 0 : index + 1;
    }
    this.head = 0;
    this.count = 0;
    return out;
  }

  /** Forgets every item (the dropped count stays). */
  clear(): void {
    this.slots.fill(undefined);
    this.head = 0;
    this.count = 0;
  }
}
