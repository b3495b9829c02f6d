/**
 * The chat: one answer to one message of a conversation, streamed as {@link ChatEvent}s. It
 * sends the conversation to the profile's model (`assistant.model`, an OpenAI-compatible
 * chat-completions endpoint, through the `openai` client with streaming), offers the tools the
 * caller's account may use (registry.toolsFor), runs each tool call the model asks for through
 * the registry as that account (`via: 'chat'`, audited there), and passes each result back as a
 * `tool` message — never into the system or user prompt — until the model finishes for another
 * reason than `tool_calls`, or the answer made `maxToolCalls` calls.
 *
 * The tools cannot write: a proposal they record waits for a person (proposal-service.ts), and
 * is announced as a `proposal` event so the console can show Confirm and Reject.
 */
import OpenAI from 'openai';
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/account-service.js';
import { AssistantUnavailableError, ConflictError } from '../../errors.js';
import type { AssistantToolRegistry, ToolOutcome } from '../tool-registry.js';
import type { ChatRateLimit } from './chat-rate-limit.js';
import type { ConversationStore, StoredMessage, StoredToolCall } from './conversation-store.js';
import type { AssistantModelConfig } from './model-config.js';
import { chatSystemPrompt } from './system-prompt.js';

/** Longest text of a message a person may send, characters. */
export const maxMessageChars = 8000;

/** What an answer streams, in order. */
export type ChatEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; id: string; name: string; arguments: string }
  | {
      type: 'tool-result';
      id: string;
      name: string;
      ok: boolean;
      /** ok: the tool's bounded answer. */
      result?: unknown;
      truncated?: boolean;
      /** not ok: why (as a problem document says it). */
      error?: Extract<ToolOutcome, { ok: false }>['error'];
    }
  | { type: 'proposal'; proposal: Record<string, unknown> }
  | {
      type: 'end';
      /** The model's last finish reason (`stop`, `length`…), or `max-tool-calls`. */
      finishReason: string;
      /** Tool calls the answer ran. */
      toolCalls: number;
    };

/** Options of {@link ChatService}. */
export interface ChatServiceOptions {
  tools: AssistantToolRegistry;
  conversations: ConversationStore;
  rateLimit: ChatRateLimit;
  /** The profile's model now (read per message, so a reload applies at once). */
  model: () => AssistantModelConfig | undefined;
  logger: Logger;
  /** Epoch ms now. */
  now: () => number;
}

const proposalTools = new Set(['proposeWrite', 'proposeAcknowledge']);

/** A message {@link ChatService.admit} accepted. */
export interface AdmittedMessage {
  /** The model to answer with. */
  model: AssistantModelConfig;
  /** Ends the conversation's busy state; call once the answer has ended. Idempotent. */
  release(): void;
}

/** See the module comment. */
export class ChatService {
  /** Conversations whose answer is being written. */
  private readonly answering = new Set<string>();

  constructor(private readonly options: ChatServiceOptions) {}

  /**
   * Checks, before anything is streamed, that the message can be answered, counts it against
   * the account's rate, and marks the conversation busy until `release` is called (when the
   * answer has ended, whatever ended it).
   *
   * One answer at a time per conversation: a message sent while the previous one is still
   * being answered was written without seeing that answer, and answering both at once would
   * interleave their messages in the stored history; it is refused, not queued.
   * @throws NotFoundError (not the account's conversation), ConflictError
   *   `assistant-not-configured` or `conversation-busy`, TooManyRequestsError.
   */
  admit(conversationId: string, principal: Principal): AdmittedMessage {
    this.options.conversations.get(conversationId, principal);
    const model = this.options.model();
    if (model === undefined) {
      throw new ConflictError(
        'assistant-not-configured',
        'The chat has no model: set assistant.model (an OpenAI-compatible endpoint: baseUrl, model) in the profile. The MCP server at /api/v2/Mcp works without one.',
      );
    }
    if (this.answering.has(conversationId)) {
      throw new ConflictError(
        'conversation-busy',
        `Conversation ${conversationId} is still answering the previous message; send this one once that answer has ended (closing its stream ends it).`,
      );
    }
    // After the busy check: a refused message is not counted against the rate.
    this.options.rateLimit.take(principal.user.id, principal.user.username);
    this.answering.add(conversationId);
    let released = false;
    return {
      model,
      release: () => {
        if (released) return;
        released = true;
        this.answering.delete(conversationId);
      },
    };
  }

  /**
   * Answers `content`, emitting events as they come, and keeps the exchange in the
   * conversation. Stops without an error when `signal` aborts (the client went away).
   * @throws AssistantUnavailableError when the model cannot be reached, answers an error, breaks
   *   off, or says nothing for `timeoutMs` (events already emitted stay emitted).
   */
  async answer(
    conversationId: string,
    principal: Principal,
    model: AssistantModelConfig,
    content: string,
    emit: (event: ChatEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const { conversations, tools: registry } = this.options;
    const at = () => new Date(this.options.now()).toISOString();
    const history = conversations.get(conversationId, principal).messages;
    const userMessage: StoredMessage = { role: 'user', content, at: at() };
    await conversations.append(conversationId, principal, [userMessage]);
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: chatSystemPrompt },
      ...history.map(toModelMessage),
      toModelMessage(userMessage),
    ];
    const offered: ChatCompletionTool[] =
      model.maxToolCalls === 0
        ? []
        : registry.toolsFor(principal).map((tool) => ({
            type: 'function',
            function: {
              name: tool.name,
              description: tool.description,
              parameters: registry.inputJsonSchema(tool),
            },
          }));
    const client = new OpenAI({
      baseURL: model.baseUrl,
      // Local engines need no key; the client insists on one, and never reads the environment.
      apiKey: model.apiKey ?? 'none',
      maxRetries: 0,
      timeout: model.timeoutMs,
    });
    let toolCalls = 0;
    for (;;) {
      // A client gone while the tools ran gets no further round: the answer ends with what was
      // done (kept above), not with a model request nobody reads.
      if (signal.aborted) return;
      const round = await this.request(client, model, messages, offered, emit, signal);
      if (round === undefined) return;
      const calls = round.toolCalls;
      const assistantMessage: StoredMessage = {
        role: 'assistant',
        content: round.text,
        at: at(),
        ...(calls.length > 0 ? { toolCalls: calls } : {}),
      };
      messages.push(toModelMessage(assistantMessage));
      const kept: StoredMessage[] = [assistantMessage];
      if (round.finishReason !== 'tool_calls' || calls.length === 0) {
        await conversations.append(conversationId, principal, kept);
        emit({ type: 'end', finishReason: round.finishReason, toolCalls });
        return;
      }
      let overLimit = false;
      for (const call of calls) {
        emit({ type: 'tool-call', id: call.id, name: call.name, arguments: call.arguments });
        let outcome: ToolOutcome;
        if (toolCalls >= model.maxToolCalls) {
          overLimit = true;
          outcome = {
            ok: false,
            error: {
              code: 'max-tool-calls',
              status: 429,
              message: `Not run: this answer already made ${model.maxToolCalls} tool calls (assistant.model.maxToolCalls).`,
            },
          };
        } else {
          toolCalls += 1;
          outcome = await registry.call(call.name, parseArguments(call.arguments), {
            principal,
            via: 'chat',
            conversationId,
          });
        }
        emit(
          outcome.ok
            ? {
                type: 'tool-result',
                id: call.id,
                name: call.name,
                ok: true,
                result: outcome.value,
                ...(outcome.truncated ? { truncated: true } : {}),
              }
            : {
                type: 'tool-result',
                id: call.id,
                name: call.name,
                ok: false,
                error: outcome.error,
              },
        );
        const proposal = outcome.ok ? proposalOf(call.name, outcome.value) : undefined;
        if (proposal !== undefined) emit({ type: 'proposal', proposal });
        const toolMessage: StoredMessage = {
          role: 'tool',
          toolCallId: call.id,
          toolName: call.name,
          ok: outcome.ok,
          content: outcome.ok ? outcome.json : JSON.stringify({ error: outcome.error }),
          at: at(),
        };
        // The result is a tool message of its own: data for the model, never a prompt.
        messages.push(toModelMessage(toolMessage));
        kept.push(toolMessage);
      }
      await conversations.append(conversationId, principal, kept);
      if (overLimit) {
        emit({ type: 'end', finishReason: 'max-tool-calls', toolCalls });
        return;
      }
    }
  }

  /** One streamed request; undefined when the client went away. */
  private async request(
    client: OpenAI,
    model: AssistantModelConfig,
    messages: ChatCompletionMessageParam[],
    offered: ChatCompletionTool[],
    emit: (event: ChatEvent) => void,
    signal: AbortSignal,
  ): Promise<{ text: string; toolCalls: StoredToolCall[]; finishReason: string } | undefined> {
    const controller = new AbortController();
    const onClientGone = () => controller.abort();
    signal.addEventListener('abort', onClientGone);
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    // The model's silence is bounded, not the length of its answer: each piece resets the wait.
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, model.timeoutMs);
    };
    let text = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    let finishReason = 'stop';
    try {
      arm();
      const stream = await client.chat.completions.create(
        {
          model: model.model,
          messages,
          stream: true,
          max_tokens: model.maxOutputTokens,
          ...(offered.length > 0 ? { tools: offered } : {}),
        },
        { signal: controller.signal },
      );
      for await (const chunk of stream) {
        arm();
        const choice = chunk.choices?.[0];
        if (choice === undefined) continue;
        const delta = choice.delta ?? {};
        if (typeof delta.content === 'string' && delta.content !== '') {
          text += delta.content;
          emit({ type: 'text', delta: delta.content });
        }
        for (const piece of delta.tool_calls ?? []) {
          const index = typeof piece.index === 'number' ? piece.index : calls.length;
          if (index < 0 || index > 64) continue;
          let call = calls[index];
          if (call === undefined) {
            call = { id: '', name: '', arguments: '' };
            calls[index] = call;
          }
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
    } catch (error) {
      if (signal.aborted && !timedOut) return undefined;
      throw this.unavailable(error, model, timedOut);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onClientGone);
    }
    if (signal.aborted) return undefined;
    const toolCalls = calls
      .filter((call) => call !== undefined && call.name !== '')
      .map((call, index) => ({
        ...call,
        id: call.id !== '' ? call.id.slice(0, 128) : `call_${index}`,
        name: call.name.slice(0, 64),
      }));
    // Some engines end a tool-calling answer with `stop`; the calls are what counts.
    if (toolCalls.length > 0 && finishReason === 'stop') finishReason = 'tool_calls';
    return { text, toolCalls, finishReason };
  }

  private unavailable(
    error: unknown,
    model: AssistantModelConfig,
    timedOut: boolean,
  ): AssistantUnavailableError {
    const where = originOf(model.baseUrl);
    if (timedOut || error instanceof OpenAI.APIConnectionTimeoutError) {
      return new AssistantUnavailableError(
        'assistant-timeout',
        `The model ${model.model} at ${where} did not answer within ${model.timeoutMs} ms (assistant.model.timeoutMs).`,
      );
    }
    if (error instanceof OpenAI.APIConnectionError) {
      return new AssistantUnavailableError(
        'assistant-unavailable',
        `The model endpoint at ${where} could not be reached.`,
      );
    }
    if (error instanceof OpenAI.APIError && error.status !== undefined) {
      const said =
        error.status === 401 || error.status === 403
          ? 'the API key (assistant.model.apiKey) was refused'
          : masked(String(error.message ?? ''), model.apiKey).slice(0, 300);
      return new AssistantUnavailableError(
        'assistant-unavailable',
        `The model endpoint at ${where} answered HTTP ${error.status}: ${said}`,
      );
    }
    this.options.logger.warn(
      { err: { message: masked(String((error as Error)?.message ?? error), model.apiKey) } },
      'the chat model’s answer could not be read',
    );
    return new AssistantUnavailableError(
      'assistant-unavailable',
      `The answer of the model at ${where} could not be read (it broke off or is not the chat-completions stream format).`,
    );
  }
}

function toModelMessage(message: StoredMessage): ChatCompletionMessageParam {
  if (message.role === 'user') return { role: 'user', content: message.content };
  if (message.role === 'tool') {
    return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
  }
  return {
    role: 'assistant',
    content: message.content === '' && message.toolCalls ? null : message.content,
    ...(message.toolCalls
      ? {
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        }
      : {}),
  };
}

/** The model's arguments as JSON; text that does not parse goes on, and the tool refuses it. */
function parseArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function proposalOf(tool: string, value: unknown): Record<string, unknown> | undefined {
  if (!proposalTools.has(tool) || typeof value !== 'object' || value === null) return undefined;
  const proposal = (value as { proposal?: unknown }).proposal;
  return typeof proposal === 'object' && proposal !== null
    ? (proposal as Record<string, unknown>)
    : undefined;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the configured baseUrl';
  }
}

function masked(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('***') : text;
}
