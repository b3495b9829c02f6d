/**
 * Runs test/helpers/modbus-peer.py — a Modbus server on Debian's python3-pymodbus, over TCP or
 * as RTU on one end of a socat pseudo-terminal pair — and talks to it over stdin/stdout.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The system Python that has Debian's python3-pymodbus (never a pyenv or venv one). */
export const systemPython = '/usr/bin/python3';
const peerScript = fileURLToPath(new URL('./modbus-peer.py', import.meta.url));

/**
 * Why the pymodbus tests cannot run here, or undefined when they can. In CI (`CI` set) they
 * always run, so a missing python3-pymodbus fails them instead of skipping them.
 */
export function pymodbusMissing(): string | undefined {
  if (process.env.CI) return undefined;
  const probe = spawnSync(systemPython, ['-c', 'import pymodbus, serial'], { encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  return `${systemPython} cannot import pymodbus (${(probe.stderr || probe.error?.message || '').trim()}); install python3-pymodbus to run these tests.`;
}

/** Why the RTU tests cannot run (no socat), or undefined. */
export function socatMissing(): string | undefined {
  if (process.env.CI) return undefined;
  const probe = spawnSync('socat', ['-V'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : 'socat is not installed';
}

/** Contents of the four tables, each from address 0. */
export interface PeerData {
  co?: number[];
  di?: number[];
  hr?: number[];
  ir?: number[];
}

/** How to serve. */
export type PeerMode =
  | { kind: 'tcp'; port?: number }
  | { kind: 'rtu'; device: string; baudRate?: number; parity?: 'N' | 'E' | 'O'; stopBits?: 1 | 2 };

/** A running pymodbus server. */
export class ModbusPeer {
  private readonly events: Record<string, unknown>[] = [];
  private waiters: { match: (event: Record<string, unknown>) => boolean; resolve: () => void }[] =
    [];
  private readonly exited: Promise<void>;
  private stderr = '';
  /** TCP port served (0 for RTU). */
  port = 0;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const event = JSON.parse(line) as Record<string, unknown>;
      this.events.push(event);
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.match(event)) return true;
        waiter.resolve();
        return false;
      });
    });
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
  }

  /**
   * Starts a server with `data` for unit `unit` (default 1); `noMaskWrite` makes it answer
   * FC 22 with exception 1 (illegal function).
   */
  static async start(
    mode: PeerMode,
    data: PeerData,
    unit = 1,
    options: { noMaskWrite?: boolean } = {},
  ): Promise<ModbusPeer> {
    const args = [peerScript, '--unit', String(unit), '--data', JSON.stringify(data)];
    if (options.noMaskWrite) args.push('--no-mask-write');
    if (mode.kind === 'tcp') args.push('--tcp', String(mode.port ?? 0));
    else {
      args.push('--rtu', mode.device, '--baud', String(mode.baudRate ?? 9600));
      args.push('--parity', mode.parity ?? 'N', '--stopbits', String(mode.stopBits ?? 1));
    }
    const child = spawn(systemPython, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const peer = new ModbusPeer(child);
    await peer.next((event) => event.event === 'listening', 15_000);
    peer.port = Number(peer.events[0]?.port ?? 0);
    return peer;
  }

  /** Writes values into a table (`hr`, `ir`, `co`, `di`) from `address`. */
  async set(table: keyof PeerData, address: number, values: number[]): Promise<void> {
    const done = this.next((event) => event.event === 'set');
    this.child.stdin.write(`${JSON.stringify({ op: 'set', table, address, values })}\n`);
    await done;
  }

  /** Reads `count` values of a table from `address`, from the server's own data store. */
  async get(table: keyof PeerData, address: number, count: number): Promise<number[]> {
    const before = this.events.length;
    const done = this.next((event) => event.event === 'get');
    this.child.stdin.write(`${JSON.stringify({ op: 'get', table, address, count })}\n`);
    await done;
    const event = this.events.slice(before).find((candidate) => candidate.event === 'get');
    return (event?.values as number[] | undefined) ?? [];
  }

  /**
   * Stops the server process (SIGSTOP): its sockets and serial port stay open, nothing answers,
   * like a device that hangs. Call {@link resume} (or {@link kill}) before the test ends.
   */
  pause(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGSTOP');
  }

  /** Lets a paused server run again (SIGCONT). Harmless when it is not paused or is gone. */
  resume(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGCONT');
  }

  /** Kills the server and waits until it and its pipes are gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      if (!stream.destroyed) {
        const closed = new Promise((resolve) => stream.once('close', resolve));
        stream.destroy();
        await closed;
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }

  private next(
    match: (event: Record<string, unknown>) => boolean,
    timeoutMs = 10_000,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`the pymodbus peer did not answer in time; stderr: ${this.stderr}`));
      }, timeoutMs);
      this.child.once('close', () => {
        clearTimeout(timer);
        reject(new Error(`the pymodbus peer exited; stderr: ${this.stderr}`));
      });
      this.waiters.push({
        match,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}

/** A socat pseudo-terminal pair: what is written to one end comes out of the other. */
export class PtyPair {
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ReturnType<typeof spawn>,
    /** The end for the driver. */
    readonly host: string,
    /** The end for the device. */
    readonly device: string,
  ) {
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
  }

  /** Creates the pair as links `host` and `device` in `dir`. */
  static async open(dir: string): Promise<PtyPair> {
    const host = join(dir, 'host');
    const device = join(dir, 'device');
    const child = spawn('socat', [`pty,raw,echo=0,link=${host}`, `pty,raw,echo=0,link=${device}`], {
      stdio: 'ignore',
    });
    const pair = new PtyPair(child, host, device);
    const deadline = Date.now() + 10_000;
    while (!existsSync(host) || !existsSync(device)) {
      if (Date.now() > deadline) throw new Error('socat did not create the pty pair');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return pair;
  }

  /** Ends socat (both ends go away). */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}
