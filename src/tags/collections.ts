import type { Logger } from 'pino';
import { CollectionNotFoundError } from '../errors.js';
import { callSafely } from './call-safely.js';
import { compileTagPattern, type TagMatcher } from './tag-pattern.js';
import type { TagStore } from './tag-store.js';

/** A named set of tag paths and patterns, as written in the profile. */
export interface CollectionDefinition {
  /** Unique name publishers refer to. */
  name: string;
  /** Exact tag paths or patterns (`*` one segment, `**` any depth). */
  members: string[];
}

/** Called when tags join a collection after it was first resolved. */
export type MembersAddedListener = (collection: string, fullTagIds: readonly string[]) => void;

interface ResolvedCollection {
  definition: CollectionDefinition;
  matchers: TagMatcher[];
  /** Resolved fullTagIds, kept in first-match order. */
  members: Set<string>;
}

/**
 * The profile's collections resolved against the store. A collection holds the tags that exist
 * and match one of its members; tags that appear later (a driver connects, a pattern gains a
 * match) join it as they are written.
 */
export class Collections {
  private readonly collections = new Map<string, ResolvedCollection>();
  private readonly listeners = new Set<MembersAddedListener>();
  private unsubscribe: (() => void) | undefined;
  private unsubscribeRemoved: (() => void) | undefined;

  /**
   * @param logger where a throwing onMembersAdded listener is reported.
   */
  constructor(
    private readonly store: TagStore,
    definitions: readonly CollectionDefinition[],
    private readonly logger?: Logger,
  ) {
    for (const definition of definitions) this.put(definition);
  }

  /** Follows tags appearing in the store. Idempotent. */
  async start(): Promise<void> {
    if (this.unsubscribe) return;
    this.unsubscribe = this.store.onTagsAdded((ids) => this.admit(ids));
    // A removed driver's tags leave every collection, so nobody reads them from it any more.
    this.unsubscribeRemoved = this.store.onTagsRemoved((ids) => {
      for (const collection of this.collections.values()) {
        for (const id of ids) collection.members.delete(id);
      }
    });
    // Tags may have appeared between construction and start.
    for (const collection of this.collections.values()) this.resolve(collection);
  }

  /** Stops following the store. Idempotent. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.unsubscribeRemoved?.();
    this.unsubscribeRemoved = undefined;
  }

  /** Names of every collection, in definition order. */
  names(): string[] {
    return [...this.collections.keys()];
  }

  /** True when a collection of that name exists. */
  has(name: string): boolean {
    return this.collections.has(name);
  }

  /** The definition of a collection. @throws CollectionNotFoundError */
  definition(name: string): CollectionDefinition {
    return this.get(name).definition;
  }

  /** The fullTagIds currently in a collection. @throws CollectionNotFoundError */
  members(name: string): readonly string[] {
    return [...this.get(name).members];
  }

  /**
   * Adds or replaces a collection and resolves it at once.
   * @throws InvalidTagPathError when a member is not a valid path or pattern.
   */
  put(definition: CollectionDefinition): void {
    const matchers = definition.members.map((member) => compileTagPattern(member));
    const collection = { definition, matchers, members: new Set<string>() };
    this.collections.set(definition.name, collection);
    this.resolve(collection);
  }

  /** Removes a collection. @returns whether it existed. */
  delete(name: string): boolean {
    return this.collections.delete(name);
  }

  /** Subscribes to tags joining collections. Returns the function that unsubscribes. */
  onMembersAdded(listener: MembersAddedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private get(name: string): ResolvedCollection {
    const collection = this.collections.get(name);
    if (collection === undefined) throw new CollectionNotFoundError(name);
    return collection;
  }

  private resolve(collection: ResolvedCollection): void {
    collection.members.clear();
    for (const id of this.store.ids()) {
      if (collection.matchers.some((matches) => matches(id))) collection.members.add(id);
    }
  }

  private admit(ids: readonly string[]): void {
    const joinedBy: [string, string[]][] = [];
    for (const [name, collection] of this.collections) {
      const joined = ids.filter(
        (id) => !collection.members.has(id) && collection.matchers.some((matches) => matches(id)),
      );
      if (joined.length === 0) continue;
      for (const id of joined) collection.members.add(id);
      joinedBy.push([name, joined]);
    }
    // Every collection is complete before anyone hears of it, and a failing listener stops nobody.
    for (const [name, joined] of joinedBy) {
      for (const listener of this.listeners) {
        callSafely(() => listener(name, joined), this.logger, 'collection listener failed');
      }
    }
  }
}
