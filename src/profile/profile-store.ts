import { Low } from 'lowdb';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { ProfileInvalidError } from '../errors.js';
import { DurableJsonFile } from './durable-json-file.js';
import { type Profile, profileSchema } from './schema.js';
import { isSealed, type SecretBox } from './secret-box.js';
import { findSecrets, type SecretLocation, setAtPath } from './secret-fields.js';
import { formatPath, validateProfile } from './validate-profile.js';

/** Options of {@link ProfileStore}. */
export interface ProfileStoreOptions {
  /** Path of the profile JSON file. */
  file: string;
  /** Seals and opens the profile's secrets. */
  secretBox: SecretBox;
  /** Schema to validate against. Default: the tagd profile schema. */
  schema?: z.ZodType;
  logger?: Logger;
}

/**
 * Loads, validates and saves the profile through lowdb. Secrets are sealed on disk and plain
 * in memory: a plaintext secret written into the file by hand is sealed on load and the file
 * saved back at once, so it does not stay readable on disk.
 */
export class ProfileStore {
  readonly file: string;
  private readonly db: Low<unknown>;
  private readonly schema: z.ZodType;

  constructor(private readonly options: ProfileStoreOptions) {
    this.file = options.file;
    this.schema = options.schema ?? profileSchema;
    this.db = new Low<unknown>(new DurableJsonFile(options.file), null);
  }

  /**
   * Reads and validates the profile, seals any plaintext secret in the file, and returns the
   * profile with defaults applied and secrets opened.
   * @throws ProfileNotFoundError, ProfileCorruptError (the file is left untouched),
   *   ProfileInvalidError (every error listed), SecretUnsealError.
   */
  async load(): Promise<Profile> {
    await this.db.read();
    const document = this.db.data;
    const secrets = findSecrets(this.schema, document);
    const opened = this.open(document, secrets);
    const validation = validateProfile(opened, this.schema);
    if (!validation.ok) throw new ProfileInvalidError(this.file, validation.errors);
    const plaintext = secrets.filter((secret) => !isSealed(secret.value));
    if (plaintext.length > 0) {
      this.db.data = this.withSecrets(document, plaintext, (secret) =>
        this.options.secretBox.seal(secret.value),
      );
      await this.db.write();
      this.options.logger?.info(
        { paths: plaintext.map((secret) => formatPath(secret.path)) },
        'sealed plaintext secrets in the profile',
      );
    }
    return validation.profile;
  }

  /**
   * Validates a profile and saves it with every secret sealed. Secrets may be given in
   * plaintext or as values sealed with this store's key.
   * @returns the saved profile, defaults applied and secrets in plaintext.
   * @throws ProfileInvalidError with every error, or SecretUnsealError for a sealed value this
   *   key cannot open; nothing is written then.
   */
  async save(profile: unknown): Promise<Profile> {
    const secrets = findSecrets(this.schema, profile);
    const opened = this.open(profile, secrets);
    const validation = validateProfile(opened, this.schema);
    if (!validation.ok) throw new ProfileInvalidError(this.file, validation.errors);
    this.db.data = this.withSecrets(profile, secrets, (secret) =>
      isSealed(secret.value) ? secret.value : this.options.secretBox.seal(secret.value),
    );
    await this.db.write();
    return validation.profile;
  }

  // Opens every sealed secret; this also proves the key can open them before anything is kept.
  private open(document: unknown, secrets: readonly SecretLocation[]): unknown {
    return this.withSecrets(document, secrets, (secret) =>
      isSealed(secret.value)
        ? this.options.secretBox.unseal(secret.value, formatPath(secret.path))
        : secret.value,
    );
  }

  // Copies the document and replaces each listed secret, leaving the original as it was.
  private withSecrets(
    document: unknown,
    secrets: readonly SecretLocation[],
    replace: (secret: SecretLocation) => string,
  ): unknown {
    if (secrets.length === 0) return document;
    const copy = structuredClone(document);
    for (const secret of secrets) setAtPath(copy, secret.path, replace(secret));
    return copy;
  }
}
