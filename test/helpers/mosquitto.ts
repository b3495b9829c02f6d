import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import type { TestCertificates } from './certificates.js';
import { tempDir } from './temp-dir.js';

const run = promisify(execFile);

/** Debian's broker binary (package `mosquitto`, installed by `.ci/run`). */
export const mosquittoBinary = '/usr/sbin/mosquitto';

/** How a test broker is configured. */
export interface MosquittoOptions {
  /** Listen on this port (a test that must know it before the broker runs). Default: a free one. */
  port?: number;
  /** Accept clients without a username. Default: true unless `users` or `tls.requireClientCert`. */
  anonymous?: boolean;
  /** Accounts written to a password file with `mosquitto_passwd`. */
  users?: Record<string, string>;
  /**
   * An ACL file's text (`user NAME` / `topic readwrite PATTERN` lines). With it, anything it
   * does not grant is refused.
   */
  acl?: string;
  /**
   * `max_queued_messages`: QoS 1 messages queued per client beyond those in flight; more are
   * silently dropped (a client too busy to read). Mosquitto's default: 1,000.
   */
  maxQueuedMessages?: number;
  /** `max_queued_bytes`: the same bound in bytes. Mosquitto's default: none (0). */
  maxQueuedBytes?: number;
  /** TLS on the listener, with the test PKI's server certificate. */
  tls?: {
    certs: TestCertificates;
    /** Clients must present a certificate signed by the test CA; its CN becomes the username. */
    requireClientCert?: boolean;
  };
}

/** A running test broker. */
export interface Mosquitto {
  /** `mqtt://127.0.0.1:<port>` or `mqtts://localhost:<port>` with TLS. */
  url: string;
  port: number;
  /** Everything the broker logged so far. */
  log: () => string;
  /** Kills the broker with SIGKILL (no clean session end, no Will suppression) and waits. */
  kill: () => Promise<void>;
  /** Starts the broker again on the same port and configuration; resolves once it listens. */
  restart: () => Promise<void>;
  /** Stops the broker (SIGTERM) and waits. Also done at teardown. */
  stop: () => Promise<void>;
}

/**
 * Starts Mosquitto on a free loopback port with a configuration generated in a temp folder,
 * stopped when the test ends. Readiness is the broker's own "running" log line, written once
 * its listener is open; a port taken between the probe and the start is retried on another.
 */
export async function startMosquitto(
  t: ExecutionContext,
  options: MosquittoOptions = {},
): Promise<Mosquitto> {
  const dir = await tempDir(t);
  const lines = ['per_listener_settings false', 'log_dest stderr', 'log_type all'];
  // As root, mosquitto drops to user `mosquitto`, which cannot read the temp folder's files.
  if (process.getuid?.() === 0) lines.push('user root');
  const anonymous =
    options.anonymous ?? (options.users === undefined && !options.tls?.requireClientCert);
  lines.push(`allow_anonymous ${anonymous}`);
  if (options.maxQueuedMessages !== undefined)
    lines.push(`max_queued_messages ${options.maxQueuedMessages}`);
  if (options.maxQueuedBytes !== undefined)
    lines.push(`max_queued_bytes ${options.maxQueuedBytes}`);
  if (options.users !== undefined) {
    const passwordFile = join(dir, 'passwords');
    await writeFile(passwordFile, '');
    await chmod(passwordFile, 0o600);
    for (const [user, password] of Object.entries(options.users)) {
      await run('mosquitto_passwd', ['-b', passwordFile, user, password]);
    }
    lines.push(`password_file ${passwordFile}`);
  }
  if (options.acl !== undefined) {
    const aclFile = join(dir, 'acl');
    await writeFile(aclFile, options.acl);
    lines.push(`acl_file ${aclFile}`);
  }
  const config = join(dir, 'mosquitto.conf');
  let child: ChildProcess | undefined;
  let output = '';
  let port = 0;

  const launch = async (): Promise<void> => {
    const listener = [`listener ${port} 127.0.0.1`];
    if (options.tls !== undefined) {
      const { certs, requireClientCert } = options.tls;
      listener.push(
        `cafile ${certs.caFile}`,
        `certfile ${certs.certFile}`,
        `keyfile ${certs.keyFile}`,
      );
      if (requireClientCert)
        listener.push('require_certificate true', 'use_identity_as_username true');
    }
    await writeFile(config, [...lines, ...listener, ''].join('\n'));
    const started = spawn(mosquittoBinary, ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    // Only this run's lines count: a restart must not take the previous run's for readiness.
    const from = output.length;
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/mosquitto version \S+ running/.test(output.slice(from))) {
          started.stderr?.off('data', onData);
          started.off('exit', onExit);
          started.stderr?.on('data', (more: Buffer) => {
            output += more.toString();
          });
          resolve();
        }
      };
      const onExit = (code: number | null) =>
        reject(new Error(`mosquitto exited (${code}) before listening: ${output}`));
      started.stderr?.on('data', onData);
      started.stdout?.on('data', onData);
      started.once('exit', onExit);
    });
  };

  for (let attempt = 1; ; attempt++) {
    port = options.port ?? (await freePort());
    try {
      await launch();
      break;
    } catch (error) {
      const inUse = /Address already in use/.test(output);
      if (attempt >= 5 || options.port !== undefined || !inUse) {
        throw error;
      }
    }
  }

  const wait = async (signal: NodeJS.Signals) => {
    const current = child;
    child = undefined;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    current.kill(signal);
    await exited;
  };
  t.teardown(() => wait('SIGKILL'));
  const host = options.tls === undefined ? '127.0.0.1' : 'localhost';
  return {
    url: `${options.tls === undefined ? 'mqtt' : 'mqtts'}://${host}:${port}`,
    port,
    log: () => output,
    kill: () => wait('SIGKILL'),
    stop: () => wait('SIGTERM'),
    restart: async () => {
      await wait('SIGKILL');
      await launch();
    },
  };
}

/** A loopback port that was free a moment ago (bound to 0 by node, then closed). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A client certificate signed by the test CA, for `require_certificate` brokers. */
export interface ClientCertificate {
  certFile: string;
  keyFile: string;
}

/**
 * Makes a client certificate (EC P-256, CN `commonName`) signed by the CA of `certs`, in the
 * same folder.
 */
export async function makeClientCertificate(
  certs: TestCertificates,
  commonName: string,
): Promise<ClientCertificate> {
  const file = (name: string) => join(certs.dir, name);
  const keyFile = file(`${commonName}.key`);
  const certFile = file(`${commonName}.pem`);
  await run('openssl', [
    ...['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', keyFile],
  ]);
  await run('openssl', [
    ...['req', '-new', '-key', keyFile, '-subj', `/CN=${commonName}`],
    ...['-out', file(`${commonName}.csr`)],
  ]);
  await writeFile(file(`${commonName}.ext`), 'extendedKeyUsage=clientAuth\n');
  await run('openssl', [
    ...['x509', '-req', '-in', file(`${commonName}.csr`), '-CA', certs.caFile],
    ...['-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2'],
    ...['-extfile', file(`${commonName}.ext`), '-out', certFile],
  ]);
  return { certFile, keyFile };
}
