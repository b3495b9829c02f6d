/**
 * One server-sent event stream of the API (`GET /api/v2/Alerts/Stream`…) with the console's
 * session handling: EventSource sends the session cookies and retries a dropped stream by
 * itself; a refused one (401 once the access cookie expired, 429, a restart) is closed, so the
 * session is renewed and the stream opened again on a growing delay (1 s doubling to 10 s), and a
 * refused renewal ends the session (back to sign-in). The same rules as the tag feed's.
 */
import { endSession, renewSession } from './api-client';

/** What a stream reports to its owner. */
export interface EventStreamHandlers {
  /** Each event's data, parsed as JSON (events that are not JSON are dropped). */
  onData(data: unknown): void;
  /** The connection state: `live` once open, `reconnecting` after a drop until open again. */
  onState(state: 'connecting' | 'live' | 'reconnecting'): void;
}

/**
 * Opens the stream at `url` (same origin).
 * @returns the function that closes it for good.
 */
export function openEventStream(url: string, handlers: EventStreamHandlers): () => void {
  let source: EventSource | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let retryDelayMs = 1_000;
  let closed = false;

  const connect = () => {
    handlers.onState(source ? 'reconnecting' : 'connecting');
    const stream = new EventSource(url);
    source = stream;
    stream.onopen = () => {
      handlers.onState('live');
      retryDelayMs = 1_000;
    };
    stream.onmessage = (event: MessageEvent<string>) => {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      handlers.onData(data);
    };
    stream.onerror = () => {
      if (closed || source !== stream) return;
      handlers.onState('reconnecting');
      if (stream.readyState !== EventSource.CLOSED) return;
      retryTimer = setTimeout(async () => {
        retryTimer = undefined;
        if (closed || source !== stream) return;
        if ((await renewSession()) === 'refused') {
          close();
          endSession();
          return;
        }
        if (!closed && source === stream) connect();
      }, retryDelayMs);
      retryDelayMs = Math.min(retryDelayMs * 2, 10_000);
    };
  };

  const close = () => {
    closed = true;
    source?.close();
    source = undefined;
    if (retryTimer) clearTimeout(retryTimer);
    retryTimer = undefined;
  };

  connect();
  return close;
}
