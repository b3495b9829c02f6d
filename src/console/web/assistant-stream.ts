/**
 * Sends a chat message (`POST /api/v2/Assistant/Conversations/{id}/Messages`) and reads its
 * answer, a `text/event-stream`, as it arrives. EventSource cannot POST, so this is fetch with
 * the session cookies and the CSRF header; an expired access cookie is renewed once (as
 * api-client does) before the message is sent again, and a refused renewal ends the session.
 */
import { ApiError, csrfToken, endSession, renewSession } from './api-client';
import type { Problem } from './api-types';

/** One event of the answer: its name (`text`, `tool-call`, …) and its JSON data. */
export interface AssistantEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * Sends `content` and calls `onEvent` for each event until the answer ends.
 * @throws ApiError when the message is refused before any stream (404, 409, 429…).
 */
export async function sendAssistantMessage(
  conversationId: string,
  content: string,
  onEvent: (event: AssistantEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const post = () =>
    fetch(`/api/v2/Assistant/Conversations/${encodeURIComponent(conversationId)}/Messages`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        Accept: 'text/event-stream',
        'Content-Type': 'application/json',
        'X-CSRF-Token': csrfToken(),
      },
      body: JSON.stringify({ content }),
      ...(signal ? { signal } : {}),
    });
  let response = await post();
  if (response.status === 401) {
    if ((await renewSession()) === 'renewed') response = await post();
    if (response.status === 401) endSession();
  }
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok || !type.startsWith('text/event-stream') || response.body === null) {
    let problem: Problem = { status: response.status, title: `HTTP ${response.status}` };
    try {
      problem = (await response.json()) as Problem;
    } catch {
      // Not a problem document: the status says enough.
    }
    throw new ApiError(problem);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true }).replace(/\r\n/g, '\n');
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const name = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: ?(.*)$/m.exec(block)?.[1];
      if (data !== undefined) {
        try {
          onEvent({ event: name, data: JSON.parse(data) as Record<string, unknown> });
        } catch {
          // Not JSON: not an event of this API.
        }
      }
      end = buffered.indexOf('\n\n');
    }
  }
}
