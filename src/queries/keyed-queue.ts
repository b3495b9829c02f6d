/**
 * Runs asynchronous work one piece at a time per key, in call order. A TagQuerySet's polls and
 * replacements read its cursors, await the history store, then write the cursors back: two of
 * them interleaved would answer the same values twice, or write an old binding's cursor over a
 * replaced one.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` once every earlier piece of work of `key` has settled; resolves with its result. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
