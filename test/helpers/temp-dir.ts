import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';

/** Makes a fresh directory under the OS temp dir, removed when the test ends. */
export async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tagd-test-'));
  // Retried: a component stopping in a teardown of its own may still finish writing a file
  // while the folder is removed (ENOTEMPTY).
  t.teardown(() => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
  return dir;
}
