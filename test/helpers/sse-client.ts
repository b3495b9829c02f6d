/**
 * A Server-Sent Events client over node:http for tests: collects events and comments as they
 * arrive, waits for them by condition (never by duration), and can stop reading to play a slow
 * client.
 */
import { type IncomingMessage, request } from 'node:http';

/** One parsed SSE block: `data` (joined lines) or a comment. */
export interface SseBlock {
  data?: string;
  comment?: string;
}

/** An open stream. */
export interface SseStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** Body text when the answer was not a stream (a problem document). */
  body: string;
  /** Every block so far. */
  blocks: SseBlock[];
  /** The `data` of every event so far, JSON-parsed. */
  events(): unknown[][];
  /** Resolves when `condition` holds over the blocks so far (checked on each arrival). */
  until(condition: (blocks: SseBlock[]) => boolean, what?: string): Promise<void>;
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  /** Stops reading (the socket's receive buffer fills, then the server's send buffer). */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Opens `url` as an event stream with these headers. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (response) => {
      const blocks: SseBlock[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let body = '';
      const isStream = (response.headers['content-type'] ?? '').startsWith('text/event-stream');
      const ended = new Promise<void>((done) => {
        response.on('end', done);
        response.on('close', done);
        response.on('error', () => done());
      });
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (!isStream) {
          body += chunk;
          return;
        }
        buffer += chunk;
        let index = buffer.indexOf('\n\n');
        while (index >= 0) {
          blocks.push(parseBlock(buffer.slice(0, index)));
          buffer = buffer.slice(index + 2);
          index = buffer.indexOf('\n\n');
        }
        for (const waiter of [...waiters]) waiter();
      });
      const stream: SseStream = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        get body() {
          return body;
        },
        blocks,
        events: () =>
          blocks
            .filter((block) => block.data !== undefined)
            .map((block) => JSON.parse(block.data as string) as unknown[]),
        until(condition, what = 'condition') {
          return new Promise<void>((done, fail) => {
            if (condition(blocks)) {
              done();
              return;
            }
            const check = () => {
              if (condition(blocks)) {
                waiters.delete(check);
                done();
              }
            };
            waiters.add(check);
            void ended.then(() => {
              if (!waiters.has(check)) return;
              waiters.delete(check);
              if (condition(blocks)) done();
              else fail(new Error(`the stream ended before: ${what}`));
            });
          });
        },
        ended,
        pause: () => response.pause(),
        resume: () => response.resume(),
        close: () => {
          req.destroy();
          response.destroy();
        },
      };
      if (!isStream) {
        response.on('end', () => resolve(stream));
      } else {
        resolve(stream);
      }
    });
    req.end();
  });
}

function parseBlock(text: string): SseBlock {
  const data: string[] = [];
  let comment: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) comment = line.slice(1).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length > 0 ? { data: data.join('\n') } : { comment: comment ?? '' };
}
