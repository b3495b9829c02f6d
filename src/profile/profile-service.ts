import type { Logger } from 'pino';
import type { ProfileStore } from './profile-store.js';
import type { Profile, ProfileInput } from './schema.js';

/**
 * The profile in force, and the one way to change it at run time: an edit is applied to a copy,
 * validated as a whole profile, saved atomically (secrets sealed), and only then becomes the
 * profile in force. Edits are serialized, so two API calls never save over each other.
 */
export class ProfileService {
  private profile: Profile;
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * @param store saves the profile (validation, sealing, durable write).
   * @param loaded the profile as loaded at start (secrets in plaintext).
   * @param audit where every saved change is logged (without secrets).
   */
  constructor(
    private readonly store: ProfileStore,
    loaded: Profile,
    private readonly audit: Logger,
  ) {
    this.profile = loaded;
  }

  /** The profile in force (secrets in plaintext: never send it out unmasked). */
  current(): Profile {
    return this.profile;
  }

  /**
   * Applies `edit` to a copy of the profile and saves it.
   * @param what audit fields describing the change, e.g. `{ event: 'webhook-created', name }`.
   * @returns the saved profile, now in force.
   * @throws ProfileInvalidError listing every problem; nothing is saved then.
   */
  update(edit: (draft: ProfileInput) => void, what: Record<string, unknown>): Promise<Profile> {
    return this.exclusive((session) => session.update(edit, what));
  }

  /**
   * Runs `task` alone: no other edit saves while it runs, so a reload (which reads the file and
   * then brings the running components in line) never interleaves with an API edit.
   * @returns what `task` returns; its rejection is passed on and does not block the queue.
   */
  exclusive<T>(task: (session: ProfileSession) => Promise<T>): Promise<T> {
    const session: ProfileSession = {
      current: () => this.profile,
      update: async (edit, what) => {
        const draft = structuredClone(this.profile) as ProfileInput;
        edit(draft);
        this.profile = await this.store.save(draft);
        this.audit.info({ ...what }, 'profile changed');
        return this.profile;
      },
      adopt: (profile) => {
        this.profile = profile;
      },
    };
    const run = this.queue.then(() => task(session));
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** What a task run by {@link ProfileService.exclusive} may do with the profile. */
export interface ProfileSession {
  /** The profile in force. */
  current(): Profile;
  /** As {@link ProfileService.update}, without queueing (the session already holds the queue). */
  update(edit: (draft: ProfileInput) => void, what: Record<string, unknown>): Promise<Profile>;
  /** Puts a profile in force that was just loaded from the file (a reload); nothing is saved. */
  adopt(profile: Profile): void;
}
