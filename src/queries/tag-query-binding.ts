/**
 * One binding of a tag query set as the client sends it: what the registry keeps per set, the
 * Local matching and the Logged reads all read. In a module of its own so that none of them
 * imports another for it (DESIGN §7, "Keep the house acyclic").
 */

/** Where a binding reads: realtime values, or the history store. */
export type BindingStore = 'Local' | 'Logged';
/** Raw samples, or one value per aggregation window. */
export type SeriesMode = 'Raw' | 'Aggregated';
/** How the samples of one aggregation window become one value. */
export type AggregationFunction = 'Avg' | 'Min' | 'Max' | 'Sum' | 'Count' | 'First' | 'Last';

/** One binding of a query set, as the client sent it (already validated). */
export interface TagQueryBinding {
  /** Tag path or pattern (`*` one segment, `**` any depth). */
  source: string;
  store: BindingStore;
  /** Range start (`now`, `now-<n><s|m|h|d>`, ISO 8601); Logged bindings only. */
  timeRangeStart?: string;
  /** Range stop; Logged bindings only. */
  timeRangeStop?: string;
  /** Default Raw. */
  seriesMode?: SeriesMode;
  /** `10s`, `5m`, `1h`, `1d` or an ISO 8601 duration; Aggregated only. */
  aggregationWindow?: string;
  aggregationFunction?: AggregationFunction;
}
