/**
 * `/api/v2/Assistant/Conversations`: the chat (src/assistant/chat/). Each account sees only its
 * own conversations; a message is answered as a stream of Server-Sent Events while the model
 * writes, calls tools (with the account's own permissions) and records proposals a person
 * confirms. Permission AssistantUse.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import { chatHeartbeatMs } from '../../assistant/chat/chat-heartbeat.js';
import { ChatRateLimit, chatMessagesPerMinute } from '../../assistant/chat/chat-rate-limit.js';
import { type ChatEvent, ChatService, maxMessageChars } from '../../assistant/chat/chat-service.js';
import {
  type ConversationStore,
  maxConversationsPerAccount,
  maxMessagesPerConversation,
  maxStoredContentChars,
} from '../../assistant/chat/conversation-store.js';
import { defaultMaxToolCalls, defaultModelTimeoutMs } from '../../assistant/chat/model-config.js';
import type { AssistantToolRegistry } from '../../assistant/tool-registry.js';
import { systemClock } from '../../clock.js';
import { TagdError } from '../../errors.js';
import type { ApiDeps } from '../api-deps.js';
import { problemFor } from '../problem.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const tag = 'Assistant';
const basePath = '/api/v2/Assistant/Conversations';

const summarySchema = z.object({
  id: z.string(),
  title: z.string().describe('The first question, shortened (or the title given at creation).'),
  createdAt: z.string().describe('ISO 8601 UTC.'),
  updatedAt: z.string().describe('ISO 8601 UTC.'),
});

const messageSchema = z
  .object({
    role: z.enum(['user', 'assistant', 'tool']),
    content: z
      .string()
      .describe(
        `The text (a tool message: the tool's JSON answer or error). At most ${maxStoredContentChars} characters are kept.`,
      ),
    at: z.string().describe('ISO 8601 UTC.'),
    toolCalls: z
      .array(z.object({ id: z.string(), name: z.string(), arguments: z.string() }))
      .optional()
      .describe('Assistant: the tools it called, with their arguments as JSON text.'),
    toolCallId: z.string().optional().describe('Tool: the call it answers.'),
    toolName: z.string().optional(),
    ok: z.boolean().optional().describe('Tool: false when the call was refused or failed.'),
  })
  .meta({ id: 'AssistantMessage' });

const conversationSchema = summarySchema
  .extend({ messages: z.array(messageSchema) })
  .meta({ id: 'AssistantConversation' });

const idParams = z.object({ id: z.string().min(1).max(64).describe('The conversation id.') });

const bounds = `Kept in the state directory: at most ${maxConversationsPerAccount} conversations per account (a new one drops the least recently used), ${maxMessagesPerConversation} messages each (the oldest dropped), ${maxStoredContentChars} characters per message. Only the account that created a conversation sees it: another account's id answers 404.`;

const streamDescription = [
  `Sends a question and answers it as a \`text/event-stream\` that ends with the answer. Each event has an \`event:\` name and one \`data:\` line of JSON: \`text\` \`{delta}\` (a piece of the answer), \`tool-call\` \`{id, name, arguments}\` (a tool the model calls, its arguments as JSON text), \`tool-result\` \`{id, name, ok, result | error, truncated?}\` (the tool's bounded answer, or the problem it was refused with), \`proposal\` \`{proposal}\` (a write or acknowledgement the model proposed: an \`AssistantProposal\`, Pending until a person confirms it at \`POST /api/v2/Assistant/Proposals/{id}/Confirm\`), then \`end\` \`{finishReason, toolCalls}\` (\`stop\`, \`length\`, or \`max-tool-calls\` when the answer reached \`assistant.model.maxToolCalls\`, default ${defaultMaxToolCalls}) or \`error\` (a problem document: 502 \`assistant-unavailable\` when the model cannot be reached, answers an error or breaks off; 504 \`assistant-timeout\` when it says nothing for \`assistant.model.timeoutMs\`, default ${defaultModelTimeoutMs} ms).`,
  "The model is the profile's `assistant.model` (an OpenAI-compatible endpoint); without one, 409 `assistant-not-configured` before any stream. Its tools are the assistant tools the account's permissions allow (a Viewer's chat is offered no `proposeWrite`), each call audited; their answers go back to the model as tool messages, never into its instructions. Nothing is ever written by the chat: proposals wait for a person.",
  `While the answer runs, a \`: heartbeat\` comment comes every ${chatHeartbeatMs / 1000} s, so a proxy with a shorter idle timeout than \`assistant.model.timeoutMs\` does not cut a long silent answer (clients ignore comments).`,
  `One answer at a time per conversation: a message sent while the previous one is still being answered is refused with 409 \`conversation-busy\` (it was asked without seeing that answer, and the stored history never interleaves two answers); send it again once the answer has ended. At most ${chatMessagesPerMinute} messages per account per minute (429 \`too-many-requests\` with Retry-After; a refused message does not count). Closing the connection stops the answer. Browsers send the CSRF header with their session cookie.`,
].join('\n\n');

/** The chat's routes. */
export function assistantConversationRoutes(
  deps: ApiDeps,
  tools: AssistantToolRegistry,
): RouteDefinition[] {
  const now = deps.now ?? Date.now;
  const store = (): ConversationStore => {
    if (!deps.conversations) throw new Error('The chat routes need the conversation store.');
    return deps.conversations;
  };
  let chat: ChatService | undefined;
  const service = (): ChatService => {
    chat ??= new ChatService({
      tools,
      conversations: store(),
      rateLimit: new ChatRateLimit(now),
      model: () => deps.profile?.current().assistant.model,
      logger: deps.logger.child({ component: 'assistant' }),
      now,
    });
    return chat;
  };
  const access = { kind: 'permission', permission: 'AssistantUse' } as const;
  return [
    defineRoute({
      method: 'post',
      path: basePath,
      operationId: 'createAssistantConversation',
      tag,
      summary: 'Start a chat conversation',
      description: bounds,
      access,
      body: z
        .strictObject({ title: z.string().max(200).optional() })
        .prefault({})
        .meta({ id: 'AssistantConversationCreate' }),
      responses: { 201: { description: 'The new conversation.', schema: conversationSchema } },
      problems: [400],
      handle: async ({ context, body, principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        const created = await store().create(principal, body.title);
        context.status = 201;
        return created;
      },
    }),
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: 'listAssistantConversations',
      tag,
      summary: "The account's chat conversations",
      description: `Most recently updated first, without their messages. ${bounds}`,
      access,
      responses: {
        200: {
          description: 'The conversations.',
          schema: z
            .object({ conversations: z.array(summarySchema) })
            .meta({ id: 'AssistantConversationList' }),
        },
      },
      problems: [],
      handle: ({ principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        return { conversations: store().list(principal) };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{id}`,
      operationId: 'getAssistantConversation',
      tag,
      summary: 'A chat conversation with its messages',
      description: bounds,
      access,
      params: idParams,
      responses: { 200: { description: 'The conversation.', schema: conversationSchema } },
      problems: [404],
      handle: ({ params, principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        return store().get(params.id, principal);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/{id}`,
      operationId: 'deleteAssistantConversation',
      tag,
      summary: 'Delete a chat conversation',
      description: 'Its proposals stay until decided or expired.',
      access,
      params: idParams,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404],
      handle: async ({ context, params, principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        await store().delete(params.id, principal);
        context.status = 204;
        return undefined;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{id}/Messages`,
      operationId: 'postAssistantMessage',
      tag,
      summary: 'Ask the assistant: the answer streams as Server-Sent Events',
      description: streamDescription,
      access,
      params: idParams,
      body: z
        .strictObject({
          content: z
            .string()
            .trim()
            .min(1, 'must not be empty')
            .max(maxMessageChars)
            .describe(`The question, at most ${maxMessageChars} characters.`),
        })
        .meta({ id: 'AssistantMessageCreate' }),
      responses: {
        200: {
          description:
            'Events until the answer ends: `event: text|tool-call|tool-result|proposal|end|error` with one `data:` line of JSON each, and `: heartbeat` comments.',
          mediaType: 'text/event-stream',
        },
      },
      problems: [400, 404, 409],
      handle: async ({ context, params, body, principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        const chat = service();
        // Refusals (not found, no model, busy, rate) answer as problem documents, before any
        // stream.
        const admitted = chat.admit(params.id, principal);
        try {
          await streamAnswer(context, deps, (emit, signal) =>
            chat.answer(params.id, principal, admitted.model, body.content, emit, signal),
          );
        } finally {
          admitted.release();
        }
        return undefined;
      },
    }),
  ];
}

/**
 * Writes the events of `run` as SSE on the raw response, with a `: heartbeat` comment every
 * {@link chatHeartbeatMs} (chat-heartbeat.ts) while it runs; an error becomes an `error` event.
 */
async function streamAnswer(
  context: Context,
  deps: Pick<ApiDeps, 'logger' | 'chatStream'>,
  run: (emit: (event: ChatEvent) => void, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const { logger } = deps;
  const clock = deps.chatStream?.clock ?? systemClock;
  const response = context.res;
  // koa must neither buffer nor answer: the socket is written directly from here on.
  context.status = 200;
  context.respond = false;
  response.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
  });
  const gone = new AbortController();
  const onClose = () => {
    if (!response.writableFinished) gone.abort();
  };
  response.on('close', onClose);
  const send = (name: string, data: unknown) => {
    if (!response.writableEnded && !response.destroyed) {
      response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    }
  };
  // Each event is one write, so a comment never lands inside one.
  const heartbeat = clock.setInterval(() => {
    if (!response.writableEnded && !response.destroyed) response.write(': heartbeat\n\n');
  }, deps.chatStream?.heartbeatMs ?? chatHeartbeatMs);
  try {
    await run(({ type, ...data }) => send(type, data), gone.signal);
  } catch (error) {
    // A bug, not the model: logged with its stack; the client sees `internal` only.
    if (!(error instanceof TagdError)) logger.error({ err: error }, 'the chat failed');
    send('error', problemFor(error, context.path));
  } finally {
    clock.clearTimer(heartbeat);
    response.off('close', onClose);
    if (!response.writableEnded) response.end();
  }
}
