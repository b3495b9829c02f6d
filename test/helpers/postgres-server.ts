/**
 * A real PostgreSQL server for one test file (or one benchmark): a throw-away cluster made with
 * initdb in a temp folder and run with pg_ctl on 127.0.0.1 and a free port. It never uses a
 * system cluster, so it works on a fresh CI machine where only the server binaries are
 * installed (`.ci/run` installs the `postgresql` package).
 *
 * initdb and postgres refuse to run as root; when the tests run as root the server runs as the
 * `postgres` system user (the child processes get its uid and gid), and the temp folder is
 * handed to that user.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running (or stopped) throw-away PostgreSQL cluster. */
export interface PostgresServer {
  /** Connection URL of the default database `postgres`, with the password when one is set. */
  url: string;
  /** TCP port on 127.0.0.1 (the same across stop/start). */
  port: number;
  /** Superuser name (`tagd`). */
  user: string;
  /** Password of {@link user}, when the cluster uses password (scram-sha-256) authentication. */
  password: string | undefined;
  /** Creates a fresh empty database and returns its URL (each backend under test gets one). */
  createDatabase(name?: string): Promise<string>;
  /** Runs SQL with psql as the superuser and returns its unaligned output (catalog checks). */
  psql(sql: string, database?: string): string;
  /** Stops the server (fast shutdown: open connections are terminated). */
  stop(): Promise<void>;
  /** Starts the stopped (or killed) server again on the same port with the same data. */
  start(): Promise<void>;
  /** Kills the postmaster with SIGKILL, as a crash or a pulled cable would look to clients. */
  kill(): Promise<void>;
  /**
   * Freezes the server and all its processes (SIGSTOP): connections stay open but nothing
   * answers, as when the network to a database drops packets silently.
   */
  freeze(): void;
  /** Lets a frozen server run again (SIGCONT). */
  thaw(): void;
  /** Stops the server for good and removes its folder. Idempotent. */
  destroy(): Promise<void>;
}

/** Options of {@link startPostgresServer}. */
export interface PostgresServerOptions {
  /** With a password the cluster requires scram-sha-256 authentication; without, trust. */
  password?: string;
}

const superuser = 'tagd';
let databaseCounter = 0;

/**
 * The folder with initdb and pg_ctl: `PG_BIN` when set, else the newest
 * `/usr/lib/postgresql/<version>/bin` (Debian's layout), else the folder of `pg_config --bindir`.
 * Undefined when no PostgreSQL server binaries are installed.
 */
export function postgresBinDir(): string | undefined {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, 'initdb'))) return fromEnv;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config on PATH
  }
  return undefined;
}

/**
 * Why PostgreSQL tests cannot run here, or undefined when they can. In CI (`CI` set) missing
 * binaries are an error, not a reason to skip: the tests must run there.
 */
export function postgresSkipReason(): string | undefined {
  if (postgresBinDir() !== undefined) return undefined;
  const reason =
    'PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/initdb, PG_BIN or ' +
    'pg_config): install the postgresql package to run the postgres history tests';
  if (process.env.CI) throw new Error(`${reason} (CI must run them)`);
  return reason;
}

/** A free TCP port on 127.0.0.1: bind port 0, read the port, close. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** uid and gid to run the server as: the `postgres` user when we are root, else ourselves. */
function serverIdentity(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const fields = line?.split(':');
  if (fields?.[2] === undefined || fields[3] === undefined) {
    throw new Error('running as root, but there is no postgres system user to run PostgreSQL as');
  }
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

/** Runs a PostgreSQL binary to completion; rejects with its output when it fails. */
function run(
  command: string,
  args: string[],
  identity: { uid: number; gid: number } | undefined,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...(identity ?? {}),
      // HOME of root is not readable by postgres; psql looks for ~/.psqlrc there.
      env: { ...process.env, HOME: tmpdir(), LC_ALL: 'C', PGCONNECT_TIMEOUT: '10' },
      // No stdin: a pipe to a program that exits without reading it fails with EPIPE.
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} failed (${code ?? signal}): ${output}`));
    });
  });
}

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/** The process and its children (from /proc), for signalling a whole cluster. */
function processTree(pid: number): number[] {
  const pids = [pid];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Creates and starts a throw-away cluster: initdb (superuser `tagd`, UTF8, C locale), fsync off
 * for speed, listening on 127.0.0.1 only with its socket in the temp folder. Call
 * {@link PostgresServer.destroy} when done (e.g. in `test.after.always`); a process exit kills
 * the server too, so a crashed test run leaves no postgres behind.
 */
export async function startPostgresServer(
  options: PostgresServerOptions = {},
): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error(postgresSkipReason() ?? 'no PostgreSQL binaries');
  const identity = serverIdentity();
  const root = await mkdtemp(join(tmpdir(), 'tagd-pg-'));
  const data = join(root, 'data');
  const log = join(root, 'server.log');
  if (identity) chownSync(root, identity.uid, identity.gid);
  chmodSync(root, 0o700);

  const initArgs = ['-D', data, '-U', superuser, '-E', 'UTF8', '--locale=C', '--no-sync'];
  if (options.password !== undefined) {
    const pwfile = join(root, 'pwfile');
    writeFileSync(pwfile, `${options.password}\n`, { mode: 0o600 });
    if (identity) chownSync(pwfile, identity.uid, identity.gid);
    initArgs.push('--auth=scram-sha-256', `--pwfile=${pwfile}`);
  } else {
    initArgs.push('--auth=trust');
  }
  await run(join(bin, 'initdb'), initArgs, identity);

  let port = await freePort();
  let postmasterPid: number | undefined;
  let destroyed = false;

  const readPid = (): number | undefined => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // A killed server leaves its pid file behind.
      return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const killOnExit = () => {
    if (postmasterPid !== undefined) {
      try {
        process.kill(postmasterPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', killOnExit);

  const pgCtlStart = () =>
    run(
      join(bin, 'pg_ctl'),
      [
        'start',
        '-w',
        '-t',
        '60',
        '-D',
        data,
        '-l',
        log,
        '-o',
        [
          `-p ${port}`,
          "-c listen_addresses='127.0.0.1'",
          `-c unix_socket_directories='${root}'`,
          // fsync off is safe while the machine does not crash; synchronous_commit stays on
          // so a killed server (kill()) keeps every commit it acknowledged, as in production.
          '-c fsync=off',
          '-c full_page_writes=off',
          '-c max_connections=40',
          '-c shared_buffers=32MB',
        ].join(' '),
      ],
      identity,
    );

  /** Starts the server; retries while a killed predecessor's shared memory is still held. */
  const start = async (pickNewPort: boolean) => {
    let lastError: unknown;
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await pgCtlStart();
        postmasterPid = readPid();
        return;
      } catch (error) {
        lastError = error;
        const logText = existsSync(log) ? readFileSync(log, 'utf8') : '';
        // Another process took the port between freePort() and listen: try another one.
        if (pickNewPort && /could not bind|Address already in use/.test(logText)) {
          port = await freePort();
        }
        await sleep(250);
      }
    }
    throw lastError;
  };
  await start(true);

  const urlFor = (database: string) => {
    const auth =
      options.password === undefined
        ? superuser
        : `${superuser}:${encodeURIComponent(options.password)}`;
    return `postgres://${auth}@127.0.0.1:${port}/${database}`;
  };

  const psql = (sql: string, database = 'postgres'): string =>
    execFileSync(
      join(bin, 'psql'),
      ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', root, '-p', String(port)],
      {
        input: sql,
        encoding: 'utf8',
        env: {
          ...process.env,
          PGUSER: superuser,
          PGDATABASE: database,
          ...(options.password === undefined ? {} : { PGPASSWORD: options.password }),
        },
        ...(identity ?? {}),
      },
    ).trim();

  const server: PostgresServer = {
    get url() {
      return urlFor('postgres');
    },
    get port() {
      return port;
    },
    user: superuser,
    password: options.password,
    async createDatabase(name) {
      const database = name ?? `t${process.pid}_${++databaseCounter}`;
      psql(`CREATE DATABASE "${database}" TEMPLATE template0 STRATEGY FILE_COPY;`);
      return urlFor(database);
    },
    psql,
    async stop() {
      if (readPid() === undefined) return;
      await run(join(bin, 'pg_ctl'), ['stop', '-w', '-m', 'fast', '-D', data], identity);
      postmasterPid = undefined;
    },
    async start() {
      await start(false);
    },
    async kill() {
      const pid = readPid();
      if (pid === undefined) return;
      process.kill(pid, 'SIGKILL');
      // Wait until the postmaster is gone; its backends notice and exit on their own.
      for (let i = 0; i < 100; i++) {
        if (!alive(pid)) break;
        await sleep(50);
      }
      postmasterPid = undefined;
    },
    freeze() {
      const pid = readPid();
      if (pid === undefined) throw new Error('the server is not running');
      for (const each of processTree(pid)) process.kill(each, 'SIGSTOP');
    },
    thaw() {
      const pid = readPid();
      if (pid === undefined) return;
      for (const each of processTree(pid)) process.kill(each, 'SIGCONT');
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        server.thaw();
        if (readPid() !== undefined) {
          await run(join(bin, 'pg_ctl'), ['stop', '-w', '-m', 'immediate', '-D', data], identity);
        }
      } catch {
        killOnExit();
      }
      process.off('exit', killOnExit);
      // Retries: a backend process of the stopped server may still be removing its files.
      await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
  return server;
}
