/**
 * `tagd status`: asks the running daemon, on its loopback HTTP listener, for its drivers,
 * publishers, history and listeners and prints them as tables. It authenticates with the local
 * status token from the state directory (src/state/status-access.ts), so it works for root and
 * the daemon's user with no account; anyone else cannot read the token and gets exit 1.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import type { statusSchema } from '../api/routes/status.js';
import { exitCodes } from '../exit-codes.js';
import { readStatusEndpoint, readStatusToken } from '../state/status-access.js';
import { CommandFailure, CommandUsageError, runCommand } from './state-dir.js';

/** What `GET /api/v2/Status` answers. */
export type DaemonStatus = z.infer<typeof statusSchema>;

/** The systemd unit's state directory (StateDirectory=tagd), the fallback of `tagd status`. */
export const systemStateDir = '/var/lib/tagd';

/** Usage of `tagd status`, printed with every usage error. */
export const statusUsage = `Usage:
  tagd status [--url URL] [--json]   the running daemon's drivers, publishers, history and
                                     listeners

  --url URL   the daemon's HTTP listener (default: where it last started, from the state
              directory's status.json)
  --json      print the daemon's answer as JSON instead of tables

Run it as root or the daemon's user (e.g. sudo tagd status): it reads the daemon's status
token from the state directory, TAGD_STATE_DIR, else ./var when that exists, else
/var/lib/tagd (the systemd unit's).

Exit codes: 0 all well; 3 a driver is not Running (Reconnecting, Failed), a publisher is in
Error or the history backend refuses appends; 1 the daemon cannot be asked (not running, the
token unreadable); 2 usage error.
`;

/** Runs `tagd status ARGS…`; sets process.exitCode (0, 1, 2 or 3). */
export function statusCommand(args: string[]): Promise<void> {
  return runCommand(statusUsage, async () => {
    const { values, positionals } = parseArgs({
      args,
      options: { url: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) {
      throw new CommandUsageError(`unexpected argument '${positionals[0]}'`);
    }
    const stateDir = statusStateDir();
    const token = await readToken(stateDir);
    const url = values.url ?? (await readUrl(stateDir));
    const status = await fetchStatus(url, token);
    process.stdout.write(
      values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status, url),
    );
    if (statusProblems(status).length > 0) process.exitCode = exitCodes.statusProblem;
  });
}

/**
 * The state directory `tagd status` reads: `TAGD_STATE_DIR`, else `./var` when it exists (a
 * checkout), else the systemd unit's /var/lib/tagd, so `sudo tagd status` needs no setting.
 */
export function statusStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TAGD_STATE_DIR) return resolve(env.TAGD_STATE_DIR);
  return existsSync('var') ? resolve('var') : systemStateDir;
}

/** What is in error, one line each; empty when all is well. */
export function statusProblems(status: DaemonStatus): string[] {
  return [
    ...status.drivers
      .filter((driver) => driver.state !== 'Running' && driver.state !== 'Stopped')
      .map((driver) => `driver ${driver.name}: ${driver.state}`),
    ...status.publishers
      .filter((publisher) => publisher.status === 'Error')
      .map((publisher) => `publisher ${publisher.name}: Error`),
    ...(status.history?.state === 'Outage' ? ['history: Outage'] : []),
  ];
}

/** The status as plain-text tables, one per part, and a closing line saying what is wrong. */
export function formatStatus(status: DaemonStatus, url: string): string {
  const sections = [
    `tagd ${status.version}, pid ${status.pid}, up ${formatUptime(status.uptimeSeconds)}, at ${url}`,
    table(
      ['DRIVER', 'TYPE', 'STATE', 'TAGS', 'GOOD', 'STALE', 'UNAVAILABLE', 'BAD', 'MESSAGE'],
      status.drivers.map((driver) => [
        driver.name,
        driver.type,
        driver.state,
        String(driver.tagCount),
        ...['Good', 'Stale', 'Unavailable', 'Bad'].map((quality) =>
          String(driver.tagsByQuality[quality] ?? 0),
        ),
        driver.message ?? driver.lastError?.message ?? '',
      ]),
      'no drivers running',
    ),
    table(
      ['PUBLISHER', 'TYPE', 'STATUS', 'REASON'],
      status.publishers.map((publisher) => [
        publisher.name,
        publisher.type,
        publisher.status,
        publisher.lastError ?? publisher.reason ?? '',
      ]),
      'no publishers',
    ),
    status.history
      ? table(
          ['HISTORY', 'STATE', 'BUFFERED', 'STORED', 'DROPPED'],
          [
            [
              status.history.backend,
              status.history.state,
              String(status.history.buffered),
              String(status.history.appended),
              String(status.history.dropped),
            ],
          ],
          '',
        )
      : 'no history',
    table(
      ['LISTENER', 'URL'],
      status.listeners.map((listener) => [listener.name, listener.url]),
      'no listeners',
    ),
  ];
  const problems = statusProblems(status);
  sections.push(problems.length === 0 ? 'all well' : `in error: ${problems.join('; ')}`);
  return `${sections.join('\n\n')}\n`;
}

async function readToken(stateDir: string): Promise<string> {
  try {
    return await readStatusToken(stateDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new CommandFailure(`no daemon has started on the state directory ${stateDir}`, [
        "Set TAGD_STATE_DIR to the daemon's state directory (the unit's is /var/lib/tagd).",
      ]);
    }
    if (code === 'EACCES') {
      throw new CommandFailure(`cannot read the status token in ${stateDir}: permission denied`, [
        "Run as root or the daemon's user: sudo tagd status",
      ]);
    }
    throw new CommandFailure(`cannot read the status token: ${(error as Error).message}`);
  }
}

async function readUrl(stateDir: string): Promise<string> {
  try {
    return (await readStatusEndpoint(stateDir)).url;
  } catch (error) {
    throw new CommandFailure(`cannot tell where the daemon listens: ${(error as Error).message}`, [
      'Give its HTTP listener with --url, e.g. --url http://127.0.0.1:8080',
    ]);
  }
}

async function fetchStatus(url: string, token: string): Promise<DaemonStatus> {
  const endpoint = new URL('/api/v2/Status', url);
  let response: Response;
  try {
    response = await fetch(endpoint, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      // A daemon that accepts but never answers (a stuck event loop) must not hang the command.
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    throw new CommandFailure(
      `the daemon does not answer at ${url}: ${cause?.code ?? (error as Error).message}`,
      ['Is it running? systemctl status tagd'],
    );
  }
  if (response.status !== 200) {
    throw new CommandFailure(
      `the daemon at ${url} answered ${response.status} to ${endpoint.pathname}`,
      response.status === 401
        ? [
            "The token in the state directory is not this daemon's: is TAGD_STATE_DIR the one it uses?",
          ]
        : [],
    );
  }
  return (await response.json()) as DaemonStatus;
}

function table(header: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return empty;
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) =>
          column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function formatUptime(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  return `${minutes}m ${seconds % 60}s`;
}
