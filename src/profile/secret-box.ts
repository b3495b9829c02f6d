import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SecretKeyError, SecretUnsealError } from '../errors.js';

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
      const key = await readKey(credential, false).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (key) return new SecretBox(key);
    }
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const file = join(stateDir, secretKeyFileName);
    try {
      return new SecretBox(await readKey(file, true));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return new SecretBox(await createKey(file));
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

async function readKey(file: string, requirePrivate: boolean): Promise<Buffer> {
  const handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const stats = await handle.stat();
    if (requirePrivate && (stats.mode & 0o077) !== 0) {
      throw new SecretKeyError(
        `Key file ${file} is readable by group or others (mode ${(stats.mode & 0o777).toString(8)}); run: chmod 600 ${file}`,
      );
    }
    const key = await readFile(handle);
    if (key.length !== keyBytes) {
      throw new SecretKeyError(`Key ${file} holds ${key.length} bytes; it must hold ${keyBytes}.`);
    }
    return key;
  } finally {
    await handle.close();
  }
}

async function createKey(file: string): Promise<Buffer> {
  const key = randomBytes(keyBytes);
  // Written whole under a private name, then linked into place: link() fails if the key exists,
  // so of two processes starting at once, one key wins and the other reads it complete.
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(key);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temporary, file);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readKey(file, true);
    throw new SecretKeyError(`Cannot create key file ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}
