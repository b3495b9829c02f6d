/**
 * The heartbeat of a chat answer's event stream. A model may think for a long while before it
 * writes (a local engine loading a model, a long tool-calling round): up to
 * `assistant.model.timeoutMs` (default 60 s) between two pieces of its answer. A reverse proxy
 * or load balancer with a shorter idle timeout (nginx's `proxy_read_timeout` is 60 s, many are
 * 30 s) would cut such a stream, so the answer sends an SSE comment line, `: heartbeat`, at a
 * fixed interval while it is open. Clients ignore comments (EventSource does; so does the
 * console's reader, which only takes blocks with a `data:` line), as on `GET /api/v2/Tags/Stream`.
 */
import type { Clock } from '../../clock.js';

/** Interval of the `: heartbeat` comments of a streamed chat answer, ms: 15 s. */
export const chatHeartbeatMs = 15_000;

/** Timing of the chat's streamed answers. */
export interface ChatStreamTiming {
  /** The clock of the heartbeat timer. Default: the system clock. */
  clock?: Clock;
  /** Interval of the heartbeat comments, ms. Default {@link chatHeartbeatMs}. */
  heartbeatMs?: number;
}
