import test from 'ava';
import pino from 'pino';
import {
  ConversationStore,
  maxConversationsPerAccount,
  maxMessagesPerConversation,
  maxStoredContentChars,
} from '../../../src/assistant/chat/conversation-store.js';
import type { Principal } from '../../../src/auth/account-service.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { tempDir } from '../../helpers/temp-dir.js';

const principal = (id: string) => ({ user: { id, username: id } }) as unknown as Principal;

test('conversations are bounded per account and per conversation, and survive a restart', async (t) => {
  const stateDir = await tempDir(t);
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  const options = { stateDir, logger: pino({ level: 'silent' }), now: () => clock.now() };
  const store = await ConversationStore.open(options);
  const alice = principal('alice');
  const ids: string[] = [];
  for (let index = 0; index <= maxConversationsPerAccount; index += 1) {
    clock.advance(1000);
    ids.push((await store.create(alice)).id);
  }
  const listed = store.list(alice);
  t.is(listed.length, maxConversationsPerAccount);
  // The least recently updated (the first) went.
  t.false(listed.some((conversation) => conversation.id === ids[0]));
  t.throws(() => store.get(ids[0] as string, alice), { code: 'not-found' });

  const id = ids.at(-1) as string;
  t.throws(() => store.get(id, principal('bob')), { code: 'not-found' });
  for (let index = 0; index < maxMessagesPerConversation; index += 1) {
    await store.append(id, alice, [
      { role: 'user', content: `q${index}`, at: '' },
      {
        role: 'assistant',
        content: 'a'.repeat(index === 0 ? maxStoredContentChars + 10 : 1),
        at: '',
      },
    ]);
  }
  const kept = store.get(id, alice).messages;
  t.is(kept.length, maxMessagesPerConversation);
  t.is(kept[0]?.role, 'user');
  t.is(kept[0]?.content, `q${maxMessagesPerConversation / 2}`);
  t.is(store.get(id, alice).title, 'q0');

  const reopened = await ConversationStore.open(options);
  t.is(reopened.list(alice).length, maxConversationsPerAccount);
  t.deepEqual(reopened.get(id, alice).messages, kept);
  t.deepEqual(reopened.list(principal('bob')), []);
});

test('a stored message is cut at its bound', async (t) => {
  const stateDir = await tempDir(t);
  const store = await ConversationStore.open({
    stateDir,
    logger: pino({ level: 'silent' }),
    now: () => 0,
  });
  const alice = principal('alice');
  const { id } = await store.create(alice, 'bounds');
  await store.append(id, alice, [
    { role: 'user', content: 'x'.repeat(maxStoredContentChars + 100), at: '' },
  ]);
  const [message] = store.get(id, alice).messages;
  t.is(message?.content.length, maxStoredContentChars + '…(cut)'.length);
  t.is(store.get(id, alice).title, 'bounds');
});
