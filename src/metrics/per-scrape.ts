/**
 * prom-client calls every metric's `collect()` one after the other, synchronously, within one
 * `registry.metrics()` call. Several metrics built from one costly reading (the drivers'
 * reports count qualities over the whole store) share it through this: read on the first
 * collect of a scrape, forgotten once that synchronous pass is over.
 */
export function perScrape<T>(read: () => T): () => T {
  let cached: { value: T } | undefined;
  return () => {
    if (cached === undefined) {
      cached = { value: read() };
      queueMicrotask(() => {
        cached = undefined;
      });
    }
    return cached.value;
  };
}
