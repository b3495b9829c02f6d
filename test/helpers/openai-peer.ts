/**
 * A loopback peer that speaks the OpenAI chat-completions wire format (what Ollama, llama.cpp's
 * server, vLLM and OpenAI answer) for the chat tests: an HTTP server on 127.0.0.1, port 0,
 * answering `POST /v1/chat/completions` with `stream: true` as SSE chunks
 * `data: {"id":…,"object":"chat.completion.chunk","choices":[{"index":0,"delta":{…},"finish_reason":null}]}`
 * and `data: [DONE]`. Tool calls are sent as deltas split across chunks (the first with index,
 * id, type and name, then the arguments in pieces), as the real servers do. Each request takes
 * the next scripted reply; every request body and its headers are recorded.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';

/** A scripted tool call: its arguments are sent in these pieces (joined: JSON). */
export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string[];
}

/** One scripted reply. */
export type ScriptedReply =
  | {
      /** Text pieces, one chunk each. */
      text?: string[];
      toolCalls?: ScriptedToolCall[];
      /** Default `tool_calls` with tool calls, else `stop`. */
      finishReason?: 'stop' | 'tool_calls' | 'length';
      /** Awaited after the first chunk: lets a test see the answer arrive piece by piece. */
      gate?: Promise<void>;
    }
  /** An HTTP error with an OpenAI error body. */
  | { status: number; message: string }
  /** Headers sent, then nothing more (a model that hangs). */
  | { hang: true };

/** A recorded request. */
export interface RecordedRequest {
  headers: IncomingHttpHeaders;
  body: {
    model: string;
    stream: boolean;
    max_tokens?: number;
    messages: {
      role: string;
      content: string | null;
      tool_call_id?: string;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    }[];
    tools?: {
      type: string;
      function: { name: string; description: string; parameters: unknown };
    }[];
  };
}

/** A started peer. */
export interface OpenAiPeer {
  /** `http://127.0.0.1:<port>/v1`: the profile's assistant.model.baseUrl. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Stops the peer (done by itself with the test when one was given). */
  close(): Promise<void>;
  /** Adds replies to the script. */
  script(...replies: ScriptedReply[]): void;
}

/** Starts a peer; it stops with the test `t` (without one, call close). */
export async function startOpenAiPeer(t?: ExecutionContext): Promise<OpenAiPeer> {
  const requests: RecordedRequest[] = [];
  const replies: ScriptedReply[] = [];
  const open = new Set<ServerResponse>();
  let sequence = 0;
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404, { 'Content-Type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }),
        );
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as RecordedRequest['body'];
      requests.push({ headers: request.headers, body });
      const reply = replies.shift() ?? { status: 500, message: 'the test scripted no reply' };
      open.add(response);
      response.on('close', () => open.delete(response));
      void answer(response, reply, body, `chatcmpl-${++sequence}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      for (const response of open) response.destroy();
      server.close(() => resolve());
    });
  t?.teardown(close);
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close,
    script: (...more) => replies.push(...more),
  };
}

async function answer(
  response: ServerResponse,
  reply: ScriptedReply,
  body: RecordedRequest['body'],
  id: string,
): Promise<void> {
  if ('status' in reply) {
    response.writeHead(reply.status, { 'Content-Type': 'application/json' });
    response.end(
      JSON.stringify({ error: { message: reply.message, type: 'server_error', code: null } }),
    );
    return;
  }
  response.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  if ('hang' in reply) return;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      system_fingerprint: 'fp_test',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    })}\n\n`;
  response.write(chunk({ role: 'assistant', content: '' }));
  let first = true;
  for (const piece of reply.text ?? []) {
    response.write(chunk({ content: piece }));
    if (first && reply.gate) await reply.gate;
    first = false;
  }
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    response.write(
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of call.arguments) {
      response.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
  response.write(chunk({}, finish));
  response.end('data: [DONE]\n\n');
}
