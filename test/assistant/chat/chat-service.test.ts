import test from 'ava';
import pino from 'pino';
import { ChatRateLimit } from '../../../src/assistant/chat/chat-rate-limit.js';
import { type ChatEvent, ChatService } from '../../../src/assistant/chat/chat-service.js';
import { ConversationStore } from '../../../src/assistant/chat/conversation-store.js';
import type { AssistantToolRegistry, ToolOutcome } from '../../../src/assistant/tool-registry.js';
import type { Principal } from '../../../src/auth/account-service.js';
import { startOpenAiPeer } from '../../helpers/openai-peer.js';
import { tempDir } from '../../helpers/temp-dir.js';

const alice = {
  user: { id: 'alice', username: 'alice' },
  permissions: new Set(),
} as unknown as Principal;

test('a client gone while a tool call runs gets no further model round: the answer ends there', async (t) => {
  const peer = await startOpenAiPeer(t);
  peer.script(
    { toolCalls: [{ id: 'call-1', name: 'readSamples', arguments: ['{"fullTagIds":["A/b"]}'] }] },
    { text: ['an answer nobody reads'] },
  );
  // A registry whose one tool answers when the test says, so the client can leave meanwhile.
  let release = () => {};
  const running = new Promise<void>((started) => {
    release = started;
  });
  let called!: () => void;
  const calling = new Promise<void>((resolve) => {
    called = resolve;
  });
  const tools = {
    toolsFor: () => [],
    inputJsonSchema: () => ({}),
    call: async (): Promise<ToolOutcome> => {
      called();
      await running;
      return { ok: true, json: '{"samples":[]}', value: { samples: [] }, truncated: false };
    },
  } as unknown as AssistantToolRegistry;
  const now = () => Date.parse('2026-01-01T00:00:00Z');
  const logger = pino({ level: 'silent' });
  const conversations = await ConversationStore.open({ stateDir: await tempDir(t), logger, now });
  const model = {
    baseUrl: peer.baseUrl,
    model: 'scripted',
    timeoutMs: 10_000,
    maxToolCalls: 8,
    maxOutputTokens: 256,
  };
  const chat = new ChatService({
    tools,
    conversations,
    rateLimit: new ChatRateLimit(now),
    model: () => model,
    logger,
    now,
  });
  const { id } = await conversations.create(alice);
  const events: ChatEvent[] = [];
  const gone = new AbortController();
  const answered = chat.answer(
    id,
    alice,
    model,
    'how warm is it?',
    (event) => events.push(event),
    gone.signal,
  );
  await calling;
  gone.abort(); // the client closes its stream while the tool runs
  release();
  await answered;
  t.is(peer.requests.length, 1, 'no model round after the client left');
  t.false(events.some((event) => event.type === 'text' && event.delta.includes('nobody')));
  t.deepEqual(
    conversations.get(id, alice).messages.map((message) => message.role),
    ['user', 'assistant', 'tool'],
    'what was done is kept: the question, the tool call and its result',
  );
});
