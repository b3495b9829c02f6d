/**
 * A real SMTP server on 127.0.0.1 for the e-mail tests: test/helpers/smtp-server.py on Debian's
 * python3-aiosmtpd (`/usr/bin/python3`), on a free port it picks itself. Every message it
 * receives is read back here, parsed enough for assertions (headers, decoded text body).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';

const script = fileURLToPath(new URL('./smtp-server.py', import.meta.url));

/** One message as the server received it. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTos: string[];
  /** The raw message (headers and body). */
  data: string;
  /** The account that authenticated, if any. */
  login: string | null;
  /** Headers by lower-case name (the first of each), RFC 2047 encoded words decoded. */
  headers: Record<string, string>;
  /** The text body, quoted-printable or base64 decoded. */
  text: string;
}

/** A running test SMTP server. */
export interface SmtpServer {
  host: '127.0.0.1';
  port: number;
  mails: ReceivedMail[];
  /** Resolves once `count` messages arrived in all (`timeoutMs` is a safety net). */
  waitForMails(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Stops the server (connections are refused afterwards); also done at teardown. */
  stop(): Promise<void>;
}

/**
 * Starts the server; `auth` makes it require that account (PLAIN/LOGIN without TLS: loopback).
 */
export async function startSmtpServer(
  t: ExecutionContext,
  options: { auth?: { user: string; password: string } } = {},
): Promise<SmtpServer> {
  const child: ChildProcessWithoutNullStreams = spawn('/usr/bin/python3', [script], {
    env: {
      ...process.env,
      PYTHONUNBUFFERED: '1',
      ...(options.auth
        ? { TAGD_SMTP_USER: options.auth.user, TAGD_SMTP_PASSWORD: options.auth.password }
        : {}),
    },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const mails: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let resolvePort: (port: number) => void = () => undefined;
  const portKnown = new Promise<number>((resolve) => {
    resolvePort = resolve;
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const event = JSON.parse(line) as { port?: number } & Omit<ReceivedMail, 'headers' | 'text'>;
    if (event.port !== undefined) {
      resolvePort(event.port);
      return;
    }
    mails.push({ ...event, ...parseMail(event.data) });
    for (const waiter of [...waiters]) waiter();
  });
  const port = await Promise.race([
    portKnown,
    exited.then(() => {
      throw new Error(`the SMTP server did not start: ${stderr}`);
    }),
  ]);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    child.kill('SIGTERM');
    await exited;
  };
  t.teardown(stop);
  return {
    host: '127.0.0.1',
    port,
    mails,
    stop,
    waitForMails: (count, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (mails.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(mails);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${mails.length} of ${count} messages arrived`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}

function parseMail(data: string): { headers: Record<string, string>; text: string } {
  const split = data.search(/\r?\n\r?\n/);
  const head = split < 0 ? data : data.slice(0, split);
  const body = split < 0 ? '' : data.slice(split).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!(name in headers)) headers[name] = decodeWords(line.slice(colon + 1).trim());
  }
  const encoding = (headers['content-transfer-encoding'] ?? '').toLowerCase();
  let text = body;
  if (encoding === 'quoted-printable') text = decodeQuotedPrintable(body);
  else if (encoding === 'base64') text = Buffer.from(body, 'base64').toString('utf8');
  return { headers, text: text.replace(/\r\n/g, '\n') };
}

function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_, kind: string, encoded: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(encoded, 'base64').toString('utf8')
        : decodeQuotedPrintable(encoded.replace(/_/g, ' ')),
    );
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const source = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < source.length; i++) {
    const char = source[i] as string;
    if (char === '=' && /^[0-9A-F]{2}$/i.test(source.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(source.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
