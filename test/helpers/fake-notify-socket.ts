import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import type { TagdProcess } from './tagd-process.js';

const script = fileURLToPath(new URL('fake-notify-socket.py', import.meta.url));

/** A fake systemd notify socket (test/helpers/fake-notify-socket.py) and what it received. */
export interface FakeNotifySocket {
  /** The socket's path: the value for `$NOTIFY_SOCKET`. */
  path: string;
  /** Every message so far, one string each, fields joined by spaces (`READY=1 STATUS=…`). */
  messages(): string[];
  /**
   * Resolves with the first message (after the first `after` messages) that has the field
   * (`READY=1`, or a `NAME=` prefix); the wait ends on the message, never on a duration.
   * With `sender`, rejects at once when that process exits first (with its output).
   */
  waitFor(field: string, after?: number, sender?: TagdProcess): Promise<string>;
}

/** Binds a fake notify socket in `folder`; it is closed when the test ends. */
export async function fakeNotifySocket(
  t: ExecutionContext,
  folder: string,
): Promise<FakeNotifySocket> {
  const path = join(folder, 'notify.sock');
  const child = spawn('python3', [script, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => {
    child.stdin.end();
    child.kill();
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    const complete = buffered.split('\n');
    buffered = complete.pop() ?? '';
    lines.push(...complete);
    for (const wake of waiters) wake();
  });
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (lines.includes('listening')) {
        waiters.delete(check);
        resolve();
      }
    };
    waiters.add(check);
    child.once('exit', (code) => reject(new Error(`fake notify socket exited (${code})`)));
    check();
  });
  const messages = () => lines.filter((line) => line !== 'listening');
  const has = (message: string, field: string) =>
    message
      .split(' ')
      .some((part) => (field.endsWith('=') ? part.startsWith(field) : part === field));
  return {
    path,
    messages,
    waitFor: (field, after = 0, sender) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = messages()
            .slice(after)
            .find((message) => has(message, field));
          if (found !== undefined) {
            waiters.delete(check);
            resolve(found);
          }
        };
        waiters.add(check);
        check();
        void sender?.exited.then((code) => {
          if (!waiters.has(check)) return;
          waiters.delete(check);
          reject(
            new Error(
              `exited (${code}) before ${field}; stdout: ${sender.stdout()}; stderr: ${sender.stderr()}`,
            ),
          );
        });
      }),
  };
}
