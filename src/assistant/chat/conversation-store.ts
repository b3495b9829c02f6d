/**
 * The chat's conversations, one JSON file each in `<stateDir>/assistant-conversations/`, kept
 * in memory and written durably after every change. Each belongs to the account that created
 * it; no other account can read, list or delete it (they get 404, as for an id that does not
 * exist). Bounded: {@link maxConversationsPerAccount} per account (creating one more drops the
 * account's least recently updated), {@link maxMessagesPerConversation} messages each (oldest
 * dropped), {@link maxStoredContentChars} characters per stored message.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/account-service.js';
import { NotFoundError } from '../../errors.js';
import { DurableJsonFile } from '../../profile/durable-json-file.js';

/** Conversations one account keeps; creating one more drops its least recently updated. */
export const maxConversationsPerAccount = 50;
/** Messages one conversation keeps (user, assistant and tool messages); the oldest are dropped. */
export const maxMessagesPerConversation = 200;
/** Characters of one stored message's content (a tool result is cut here, and says so). */
export const maxStoredContentChars = 16_384;
/** Folder of the conversation files in the state directory. */
export const conversationsFolder = 'assistant-conversations';

/** A tool call the model asked for. */
export interface StoredToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text). */
  arguments: string;
}

/** One message of a conversation. */
export interface StoredMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  /** ISO 8601 UTC. */
  at: string;
  /** Assistant: the tools it called. */
  toolCalls?: StoredToolCall[];
  /** Tool: which call this answers. */
  toolCallId?: string;
  /** Tool: the tool's name, and whether it answered (false: refused or failed). */
  toolName?: string;
  ok?: boolean;
}

/** A conversation as kept and as `GET …/Conversations/{id}` answers it. */
export interface Conversation {
  id: string;
  title: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  updatedAt: string;
  messages: StoredMessage[];
}

interface ConversationFile extends Conversation {
  version: 1;
  /** The owning account's id (stable across renames). */
  ownerId: string;
}

/** Options of {@link ConversationStore.open}. */
export interface ConversationStoreOptions {
  stateDir: string;
  logger: Logger;
  /** Epoch ms now. */
  now: () => number;
}

/** See the module comment. */
export class ConversationStore {
  private readonly conversations = new Map<string, ConversationFile>();
  private readonly folder: string;
  // One file object per conversation: its writes are serialized by the file's own queue.
  private readonly files = new Map<string, DurableJsonFile<ConversationFile>>();

  private constructor(private readonly options: ConversationStoreOptions) {
    this.folder = join(options.stateDir, conversationsFolder);
  }

  /** Loads the conversations kept by earlier runs; an unreadable file is logged and skipped. */
  static async open(options: ConversationStoreOptions): Promise<ConversationStore> {
    const store = new ConversationStore(options);
    await mkdir(store.folder, { recursive: true, mode: 0o700 });
    for (const name of await readdir(store.folder)) {
      if (!/^[A-Za-z0-9_-]{1,64}\.json$/.test(name)) continue;
      try {
        const document = (await new DurableJsonFile<ConversationFile>(
          join(store.folder, name),
        ).read()) as ConversationFile;
        if (
          document?.version === 1 &&
          typeof document.id === 'string' &&
          `${document.id}.json` === name &&
          typeof document.ownerId === 'string' &&
          Array.isArray(document.messages)
        ) {
          store.conversations.set(document.id, document);
        }
      } catch (error) {
        options.logger.warn({ err: error, file: name }, 'an assistant conversation is unreadable');
      }
    }
    return store;
  }

  /** A new, empty conversation of the caller's account. */
  async create(principal: Principal, title?: string): Promise<Conversation> {
    const now = new Date(this.options.now()).toISOString();
    const owned = this.owned(principal);
    // Least recently updated first: those go when the account is at its bound.
    owned.sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
    while (owned.length >= maxConversationsPerAccount) {
      const dropped = owned.shift() as ConversationFile;
      await this.remove(dropped.id);
    }
    const conversation: ConversationFile = {
      version: 1,
      id: randomBytes(12).toString('base64url'),
      ownerId: principal.user.id,
      title: (title ?? '').trim().slice(0, 200),
      createdAt: now,
      updatedAt: now,
      messages: [],
    };
    this.conversations.set(conversation.id, conversation);
    await this.save(conversation);
    return publicView(conversation);
  }

  /** The account's conversations, most recently updated first, without their messages. */
  list(principal: Principal): Omit<Conversation, 'messages'>[] {
    return this.owned(principal)
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
      .map(({ id, title, createdAt, updatedAt }) => ({ id, title, createdAt, updatedAt }));
  }

  /** One of the account's conversations. @throws NotFoundError for any other id. */
  get(id: string, principal: Principal): Conversation {
    return publicView(this.find(id, principal));
  }

  /** Deletes one of the account's conversations. @throws NotFoundError for any other id. */
  async delete(id: string, principal: Principal): Promise<void> {
    this.find(id, principal);
    await this.remove(id);
  }

  /**
   * Adds messages to one of the account's conversations and saves it; the oldest messages go
   * beyond the bound (never leaving a tool answer or a tool call without its user question).
   */
  async append(id: string, principal: Principal, messages: StoredMessage[]): Promise<void> {
    const conversation = this.find(id, principal);
    for (const message of messages) {
      conversation.messages.push(
        message.content.length > maxStoredContentChars
          ? { ...message, content: `${message.content.slice(0, maxStoredContentChars)}…(cut)` }
          : message,
      );
    }
    if (conversation.messages.length > maxMessagesPerConversation) {
      conversation.messages.splice(0, conversation.messages.length - maxMessagesPerConversation);
      // A model refuses a history that starts with a tool answer: start at a user message.
      const start = conversation.messages.findIndex((message) => message.role === 'user');
      conversation.messages.splice(0, start < 0 ? conversation.messages.length : start);
    }
    if (conversation.title === '') {
      const first = conversation.messages.find((message) => message.role === 'user');
      if (first) conversation.title = first.content.replace(/\s+/g, ' ').trim().slice(0, 80);
    }
    conversation.updatedAt = new Date(this.options.now()).toISOString();
    await this.save(conversation);
  }

  private owned(principal: Principal): ConversationFile[] {
    return [...this.conversations.values()].filter(
      (conversation) => conversation.ownerId === principal.user.id,
    );
  }

  private find(id: string, principal: Principal): ConversationFile {
    const conversation = this.conversations.get(id);
    if (conversation === undefined || conversation.ownerId !== principal.user.id) {
      throw new NotFoundError(`No conversation '${id.slice(0, 64)}'.`);
    }
    return conversation;
  }

  private async save(conversation: ConversationFile): Promise<void> {
    let file = this.files.get(conversation.id);
    if (file === undefined) {
      file = new DurableJsonFile<ConversationFile>(join(this.folder, `${conversation.id}.json`));
      this.files.set(conversation.id, file);
    }
    await file.write(conversation);
  }

  private async remove(id: string): Promise<void> {
    this.conversations.delete(id);
    this.files.delete(id);
    await unlink(join(this.folder, `${id}.json`)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

function publicView(conversation: ConversationFile): Conversation {
  const { id, title, createdAt, updatedAt, messages } = conversation;
  return { id, title, createdAt, updatedAt, messages: messages.map((message) => ({ ...message })) };
}
