import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SecretUnsealError } from '../errors.js';
import { loadOrCreateKey, readKeyFile } from '../state/key-file.js';

/** Prefix of a sealed value in the profile. */
export const sealedPrefix = 'enc:v1:';
/** File name of the sealing key in the state directory. */
export const secretKeyFileName = 'secret.key';
/** Name of the systemd credential that, when present, holds the key instead of the file. */
export const secretKeyCredentialName = 'tagd-secret-key';

const keyBytes = 32;
const ivBytes = 12;
const tagBytes = 16;
// Binds every sealed value to this use, so a key reused elsewhere cannot open profile secrets.
const associatedData = Buffer.from('tagd profile secret v1');

/** True when a value is already sealed (`enc:v1:…`). */
export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(sealedPrefix);
}

/**
 * Seals and opens profile secrets with AES-256-GCM. The key is 32 random bytes, created on
 * first use in the state directory with mode 0600, or read from the systemd credential
 * `tagd-secret-key` when the unit provides one.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /**
   * Loads the key, creating it when neither the credential nor the key file exists.
   * @param stateDir the daemon's state directory (created 0700 if missing).
   * @param credentialsDir systemd's `$CREDENTIALS_DIRECTORY`, if any.
   * @throws SecretKeyError when the key is unreadable, the wrong size, or readable by others.
   */
  static async open(stateDir: string, credentialsDir?: string): Promise<SecretBox> {
    if (credentialsDir) {
      const credential = join(credentialsDir, secretKeyCredentialName);
      const key = await readKeyFile(credential, keyBytes, false).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          throw error;
        },
      );
      if (key) return new SecretBox(key);
    }
    return new SecretBox(await loadOrCreateKey(join(stateDir, secretKeyFileName), keyBytes));
  }

  /**
   * Loads an existing key without creating one (for read-only checks).
   * @returns undefined when neither the credential nor the key file exists.
   */
  static async openExisting(
    stateDir: string,
    credentialsDir?: string,
  ): Promise<SecretBox | undefined> {
    const candidates: [string, boolean][] = [[join(stateDir, secretKeyFileName), true]];
    if (credentialsDir) candidates.unshift([join(credentialsDir, secretKeyCredentialName), false]);
    for (const [file, requirePrivate] of candidates) {
      try {
        return new SecretBox(await readKeyFile(file, keyBytes, requirePrivate));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return undefined;
  }

  /** Seals a plaintext secret into `enc:v1:<base64url(iv | tag | ciphertext)>`. */
  seal(plaintext: string): string {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(associatedData);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return (
      sealedPrefix + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')
    );
  }

  /**
   * Opens a sealed value.
   * @param where the value's path in the profile, named in the error.
   * @throws SecretUnsealError when the value was altered or sealed with another key.
   */
  unseal(sealed: string, where: string): string {
    if (!isSealed(sealed)) throw new SecretUnsealError(where);
    const packed = Buffer.from(sealed.slice(sealedPrefix.length), 'base64url');
    if (packed.length < ivBytes + tagBytes) throw new SecretUnsealError(where);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, packed.subarray(0, ivBytes));
      decipher.setAAD(associatedData);
      decipher.setAuthTag(packed.subarray(ivBytes, ivBytes + tagBytes));
      const plaintext = Buffer.concat([
        decipher.update(packed.subarray(ivBytes + tagBytes)),
        decipher.final(),
      ]);
      return plaintext.toString('utf8');
    } catch {
      throw new SecretUnsealError(where);
    }
  }
}
