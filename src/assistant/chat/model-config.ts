/**
 * The profile's `assistant.model`: the OpenAI-compatible chat-completions endpoint the chat
 * talks to (Ollama, llama.cpp's server, vLLM, LM Studio, OpenAI, Azure OpenAI). Absent: the chat
 * answers 409 `assistant-not-configured`; the MCP server needs no model and works without it.
 */
import { z } from 'zod';
import { secret } from '../../profile/secret-fields.js';

/** Default wait for the model's next streamed chunk, ms: 60 s. */
export const defaultModelTimeoutMs = 60_000;
/** Default tool calls one answer may make: 8. */
export const defaultMaxToolCalls = 8;
/** Default tokens the model may write per request: 1024. */
export const defaultMaxOutputTokens = 1024;

const apiKeySchema = secret(
  z
    .string()
    .min(1)
    .max(4096)
    .describe(
      'The API key sent as a Bearer token (OpenAI, Azure, a proxy). Sealed at rest and masked on the way out; never logged. Absent for a local engine that needs none (Ollama, llama.cpp).',
    ),
);

/** The `assistant.model` section. */
export const assistantModelSchema = z
  .strictObject({
    baseUrl: z
      .url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' })
      .max(2048)
      .describe(
        'The endpoint’s base URL, up to and including the API version: `http://ollama-host:11434/v1` (Ollama), `http://127.0.0.1:8080/v1` (llama.cpp server), `https://api.openai.com/v1`. The chat POSTs to `<baseUrl>/chat/completions`.',
      ),
    model: z
      .string()
      .min(1)
      .max(256)
      .describe('The model name the endpoint knows, e.g. `llama3.1` or `qwen2.5:7b`.'),
    apiKey: apiKeySchema.optional(),
    timeoutMs: z
      .int()
      .min(1000)
      .max(600_000)
      .default(defaultModelTimeoutMs)
      .describe(
        `Milliseconds to wait for the model's answer to begin and then for each next piece of it; beyond, the answer ends with 504 \`assistant-timeout\`. Default ${defaultModelTimeoutMs}.`,
      ),
    maxToolCalls: z
      .int()
      .min(0)
      .max(64)
      .default(defaultMaxToolCalls)
      .describe(
        `Tool calls one answer may make; the answer then ends (finish reason \`max-tool-calls\`). Default ${defaultMaxToolCalls}.`,
      ),
    maxOutputTokens: z
      .int()
      .min(16)
      .max(32_768)
      .default(defaultMaxOutputTokens)
      .describe(
        `Tokens the model may write per request (\`max_tokens\`). Default ${defaultMaxOutputTokens}.`,
      ),
  })
  .describe(
    'The OpenAI-compatible chat-completions endpoint of the chat (POST /api/v2/Assistant/Conversations/{id}/Messages). Absent: no chat (409 `assistant-not-configured`); MCP works without it.',
  );

/** The validated `assistant.model` section. */
export type AssistantModelConfig = z.infer<typeof assistantModelSchema>;
