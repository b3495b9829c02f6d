/**
 * Runs test/helpers/slcan-peer.py — an SLCAN adapter served over TCP or a pseudo-terminal that
 * encodes its frames with Debian's python3-can — and talks to it over its stdin/stdout.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { untilTimeoutMs } from './until.js';

/** The system Python that has Debian's python3-can (never a pyenv or venv one). */
export const systemPython = '/usr/bin/python3';
const peerScript = fileURLToPath(new URL('./slcan-peer.py', import.meta.url));

/**
 * Why the SLCAN tests cannot run here, or undefined when they can. In CI (`CI` set) they always
 * run, so a missing python3-can fails them instead of skipping them.
 */
export function pythonCanMissing(): string | undefined {
  if (process.env.CI) return undefined;
  const probe = spawnSync(systemPython, ['-c', 'import can, serial'], { encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  return (
    `${systemPython} cannot import python-can (${(probe.stderr || probe.error?.message || '').trim()}); ` +
    'install Debian’s python3-can (apt-get install python3-can) to run the SLCAN tests.'
  );
}

/** A frame for the peer to send. */
export interface PeerFrame {
  id: number;
  extended?: boolean;
  remote?: boolean;
  /** Payload as hex. */
  data?: string;
  /** DLC of a remote frame. */
  dlc?: number;
}

/** An event the peer reported. */
export interface PeerEvent {
  event: string;
  port?: number;
  pty?: string;
  command?: string;
  answer?: 'ok' | 'error';
  frames?: number;
  lines?: string[];
}

/** A running peer. */
export class SlcanPeer {
  /** Every event so far, in order. */
  readonly events: PeerEvent[] = [];
  private waiters: { match: (event: PeerEvent) => boolean; resolve: (event: PeerEvent) => void }[] =
    [];
  private exited: Promise<void>;
  private stderr = '';

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const event = JSON.parse(line) as PeerEvent;
      this.events.push(event);
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.match(event)) return true;
        waiter.resolve(event);
        return false;
      });
    });
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
  }

  /** Starts a peer: over TCP (default) or a pseudo-terminal. */
  static async start(mode: 'tcp' | 'pty' = 'tcp'): Promise<SlcanPeer> {
    const child = spawn(systemPython, [peerScript, ...(mode === 'pty' ? ['--pty'] : [])], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const peer = new SlcanPeer(child);
    await peer.next((event) => event.event === 'listening', 10_000);
    return peer;
  }

  /** `socket://127.0.0.1:<port>` (TCP) or the pseudo-terminal's path. */
  get address(): string {
    const listening = this.events[0] as PeerEvent;
    return listening.pty ?? `socket://127.0.0.1:${listening.port}`;
  }

  /** The commands the host sent, in order. */
  get commands(): string[] {
    return this.events.flatMap((event) =>
      event.event === 'command' && event.command !== undefined ? [event.command] : [],
    );
  }

  /** The first event from now on that matches. */
  next(match: (event: PeerEvent) => boolean, timeoutMs = untilTimeoutMs): Promise<PeerEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter.resolve !== done);
        reject(
          new Error(
            `the SLCAN peer did not report the event within ${timeoutMs} ms; events: ${JSON.stringify(
              this.events,
            )}; stderr: ${this.stderr}`,
          ),
        );
      }, timeoutMs);
      const done = (event: PeerEvent) => {
        clearTimeout(timer);
        resolve(event);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  /** The first event so far that matches, or else the next one. */
  seen(match: (event: PeerEvent) => boolean, timeoutMs = untilTimeoutMs): Promise<PeerEvent> {
    const event = this.events.find(match);
    return event !== undefined ? Promise.resolve(event) : this.next(match, timeoutMs);
  }

  /** Waits until the host has sent `command` (counting those already sent). */
  async command(command: string, timeoutMs = untilTimeoutMs): Promise<void> {
    await this.commandCount(command, 1, timeoutMs);
  }

  /** Waits until the host has sent `command` at least `count` times in all. */
  async commandCount(command: string, count: number, timeoutMs = untilTimeoutMs): Promise<void> {
    const sent = () => this.commands.filter((c) => c === command).length;
    while (sent() < count) {
      await this.next((event) => event.event === 'command' && event.command === command, timeoutMs);
    }
  }

  /** Sends frames; resolves with the lines written once the peer has written them. */
  async send(frames: PeerFrame[], timestamp?: number): Promise<string[]> {
    const sent = this.next((event) => event.event === 'sent');
    this.control({ op: 'send', frames, ...(timestamp !== undefined ? { timestamp } : {}) });
    return (await sent).lines ?? [];
  }

  /** Writes raw text to the host. */
  async raw(text: string): Promise<void> {
    const sent = this.next((event) => event.event === 'sent');
    this.control({ op: 'raw', text });
    await sent;
  }

  /** Answers BEL to `command` from now on. */
  async refuse(command: string): Promise<void> {
    const done = this.next((event) => event.event === 'refusing');
    this.control({ op: 'refuse', command });
    await done;
  }

  /** Closes the host's connection (the peer keeps listening). */
  async drop(): Promise<void> {
    const done = this.next((event) => event.event === 'disconnected');
    this.control({ op: 'drop' });
    await done;
  }

  /** Kills the peer (a lost adapter) and waits until it is gone and its pipes are closed. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
    // 'close' waits for stdout and stderr only: our end of stdin would stay open until a write.
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
      if (!stream.destroyed) {
        const closed = new Promise((resolve) => stream.once('close', resolve));
        stream.destroy();
        await closed;
      }
    }
    // The process handle is released in the event loop's close phase, which may still be ahead
    // when 'close' fires: let one full loop iteration pass so that it is gone when we return.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }

  private control(request: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(request)}\n`);
  }
}

/** Runs python-can's slcan interface as the host against `address` and returns what it received. */
export function pythonCanReceive(
  address: string,
  count: number,
  bitrate = 500_000,
): { child: ChildProcessWithoutNullStreams; received: Promise<PeerFrame[]> } {
  const script = [
    'import sys, json, can',
    `bus = can.interface.Bus(interface='slcan', channel=${JSON.stringify(address)}, bitrate=${bitrate}, sleep_after_open=0)`,
    'print(json.dumps({"ready": True}), flush=True)',
    'out = []',
    `while len(out) < ${count}:`,
    '    m = bus.recv(timeout=5)',
    '    if m is None: break',
    '    out.append({"id": m.arbitration_id, "extended": m.is_extended_id, "remote": m.is_remote_frame, "dlc": m.dlc, "data": m.data.hex().upper()})',
    'print(json.dumps(out), flush=True)',
    'bus.shutdown()',
  ].join('\n');
  const child = spawn(systemPython, ['-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const received = new Promise<PeerFrame[]>((resolve, reject) => {
    child.once('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0) reject(new Error(`python-can exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(last) as PeerFrame[]);
    });
  });
  return { child, received };
}
