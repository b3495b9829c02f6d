/**
 * systemd's service notifications (sd_notify(3)) for `Type=notify`: READY=1 once the daemon
 * serves, RELOADING=1 … READY=1 around a reload, STOPPING=1 when a stop begins, and WATCHDOG=1
 * keep-alives for `WatchdogSec=`.
 *
 * Why the `systemd-notify` binary and not a socket of our own: `$NOTIFY_SOCKET` is a unix
 * *datagram* socket, which Node's core cannot open, so talking to it directly needs a native
 * addon (the `sd-notify` package links libsystemd and needs its headers to build, on every
 * install). `systemd-notify` ships with systemd itself, so it is present wherever there is a
 * notify socket, is maintained with the protocol (abstract `@` sockets, credentials), and since
 * systemd 246 waits until PID 1 has read each message (its BARRIER=1), so a message from this
 * short-lived helper is never dropped for a sender that already exited. The cost: messages come
 * from the helper's pid, so the unit needs `NotifyAccess=all` (tagd starts no other processes),
 * and each message is a process spawn (a few ms; the watchdog sends one every
 * WatchdogSec/2, 15 s in the shipped unit).
 */
import { execFile } from 'node:child_process';
import type { Logger } from 'pino';

/** Options of {@link SystemdNotifier}. */
export interface SystemdNotifierOptions {
  logger: Logger;
  /** Environment holding NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** This process's pid, compared with WATCHDOG_PID. Default: process.pid. */
  pid?: number;
  /** The sender binary. Default: `systemd-notify` from PATH. */
  command?: string;
}

/**
 * Sends service notifications to systemd when `$NOTIFY_SOCKET` is set, and nothing otherwise
 * (a terminal, a container, tests): every method is then a no-op. A message that cannot be sent
 * is logged once per kind and never stops the daemon.
 */
export class SystemdNotifier {
  /** Whether systemd asked for notifications (`$NOTIFY_SOCKET` is set). */
  readonly enabled: boolean;
  private readonly env: NodeJS.ProcessEnv;
  private readonly command: string;
  private readonly logger: Logger;
  private readonly watchdogMs: number | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  private pingInFlight = false;
  private readonly warned = new Set<string>();

  constructor(options: SystemdNotifierOptions) {
    this.env = options.env ?? process.env;
    this.logger = options.logger;
    this.command = options.command ?? 'systemd-notify';
    this.enabled = Boolean(this.env.NOTIFY_SOCKET);
    this.watchdogMs = this.enabled
      ? watchdogIntervalMs(this.env, options.pid ?? process.pid)
      : undefined;
  }

  /**
   * Interval of the WATCHDOG=1 keep-alives, ms: half of `$WATCHDOG_USEC` (as sd_watchdog_enabled(3)
   * advises), or undefined when systemd runs no watchdog for this process.
   */
  get watchdogInterval(): number | undefined {
    return this.watchdogMs;
  }

  /** READY=1: start-up (or a reload) is complete and the API answers. */
  ready(status?: string): Promise<void> {
    return this.send('ready', ['READY=1', ...statusField(status)]);
  }

  /**
   * RELOADING=1 with MONOTONIC_USEC= (CLOCK_MONOTONIC, which systemd 253+ requires to tell this
   * reload from an earlier one). Follow it with {@link ready} once the reload is done.
   */
  reloading(status?: string): Promise<void> {
    const monotonicUsec = process.hrtime.bigint() / 1000n;
    return this.send('reloading', [
      'RELOADING=1',
      `MONOTONIC_USEC=${monotonicUsec}`,
      ...statusField(status),
    ]);
  }

  /** STOPPING=1: the daemon began to stop. */
  stopping(): Promise<void> {
    return this.send('stopping', ['STOPPING=1']);
  }

  /**
   * Runs a reload between RELOADING=1 and READY=1. READY=1 follows a failed reload too: the
   * daemon keeps serving what it ran before, and systemd must not wait for it. The seam for
   * the live reconfiguration (SIGHUP, `systemctl reload`).
   * @returns what `apply` returned; rethrows what it threw.
   */
  async reload<T>(apply: () => Promise<T>): Promise<T> {
    await this.reloading();
    try {
      const result = await apply();
      await this.ready();
      return result;
    } catch (error) {
      await this.ready('reload failed: running the previous configuration');
      throw error;
    }
  }

  /**
   * Starts the WATCHDOG=1 keep-alives when systemd runs a watchdog for this process. They come
   * from a timer on the main event loop, so a loop that is stuck (a busy loop, a blocking call)
   * stops them and systemd restarts the daemon after `WatchdogSec=`. The timer does not keep
   * the process alive. Idempotent.
   */
  startWatchdog(): void {
    if (this.watchdogMs === undefined || this.watchdogTimer) return;
    const ping = () => {
      // One helper at a time: a hung systemd-notify must not pile up processes.
      if (this.pingInFlight) return;
      this.pingInFlight = true;
      void this.send('watchdog', ['WATCHDOG=1']).finally(() => {
        this.pingInFlight = false;
      });
    };
    ping();
    this.watchdogTimer = setInterval(ping, this.watchdogMs);
    this.watchdogTimer.unref();
  }

  /** Stops the keep-alives. Idempotent. */
  stopWatchdog(): void {
    clearInterval(this.watchdogTimer);
    this.watchdogTimer = undefined;
  }

  private send(kind: string, fields: string[]): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    return new Promise((resolve) => {
      execFile(this.command, fields, { env: this.env, timeout: 10_000 }, (error, _out, stderr) => {
        if (error && !this.warned.has(kind)) {
          // Once per kind: a missing binary would otherwise log every watchdog interval.
          this.warned.add(kind);
          this.logger.warn(
            { err: error, stderr: String(stderr).trim(), fields },
            `cannot notify systemd (${kind}) through ${this.command}`,
          );
        }
        resolve();
      });
    });
  }
}

/**
 * The keep-alive interval for `$WATCHDOG_USEC`, ms (half the timeout), or undefined when it is
 * unset or not a positive number, or when `$WATCHDOG_PID` names another process (the watchdog
 * is then that process's business).
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid: number): number | undefined {
  const usec = Number(env.WATCHDOG_USEC);
  if (!env.WATCHDOG_USEC || !Number.isFinite(usec) || usec <= 0) return undefined;
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return undefined;
  return Math.max(1, Math.floor(usec / 2000));
}

function statusField(status: string | undefined): string[] {
  // One line: a newline would start another field of the message.
  return status === undefined ? [] : [`STATUS=${status.replace(/\s+/g, ' ')}`];
}
