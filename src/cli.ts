#!/usr/bin/env node
/**
 * The `tagd` command. `start` hands over to main.ts, which owns the process from then on;
 * the other commands set process.exitCode and return.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { opcuaCommand, opcuaUsage } from './cli/opcua-command.js';
import { profileCommand, profileUsage } from './cli/profile-command.js';
import { isParseArgsError, resolveStateDir } from './cli/state-dir.js';
import { statusCommand, statusUsage } from './cli/status-command.js';
import { tokensCommand, tokensUsage } from './cli/tokens-command.js';
import { usersCommand, usersUsage } from './cli/users-command.js';
import { prepareDemoProfile } from './demo-profile.js';
import { exitCodes } from './exit-codes.js';
import { parseListen } from './listen-address.js';
import { createLogger, logLevelProblem } from './logger.js';
import { RecentEvents } from './recent-events.js';
import { version } from './version.js';

const usage = `tagd ${version}: edge gateway daemon

Usage:
  tagd start [--profile FILE] [--listen HOST:PORT]   run the daemon
  tagd start --demo [--listen HOST:PORT]             run a copy of the demo profile (made once
                                                     in the state directory)
  tagd profile check FILE                            list every error in a profile
  tagd profile export|import …                       back up or roll out a profile, secrets
                                                     masked ('tagd profile help')
  tagd status [--url URL] [--json]                   ask the running daemon: drivers,
                                                     publishers, history, listeners
  tagd users add|list|disable|enable|roles|passwd|2fa|unlock …
                                                     manage accounts ('tagd users help')
  tagd tokens generate NAME                          print a service account's token
  tagd opcua list|trust FILE|THUMBPRINT              OPC UA server certificates: list,
                                                     trust a rejected one ('tagd opcua help')
  tagd version                                       print the version (also --version, -v)
  tagd help [COMMAND]                                this text, or a command's (also
                                                     tagd COMMAND --help)

Environment:
  TAGD_PROFILE     profile path when --profile is not given (default: config/profile.json)
  TAGD_STATE_DIR   state directory: keys, users, history (default: ./var)
  TAGD_LOG_LEVEL   trace, debug, info, warn, error, fatal, silent (default: info)

Exit codes: 0 ok, 1 failure, 2 usage error, 3 (tagd status) something is in error,
78 configuration error (profile, a file it names, the state directory in use by another
daemon, TAGD_LOG_LEVEL, a Node.js version tagd does not support).
`;

const startUsage = `Usage:
  tagd start [--profile FILE] [--listen HOST:PORT]   run the daemon
  tagd start --demo [--listen HOST:PORT]             run a copy of the demo profile

  --profile FILE      the profile (default: TAGD_PROFILE, else config/profile.json)
  --listen HOST:PORT  replaces the profile's loopback HTTP listener ([::1]:8080 for IPv6)
  --extensions-listen HOST:PORT
                      replaces the extensions server's HTTP listener (extensions.listen)
  --demo              <state>/demo-profile.json, copied from config/demo.json on first use

Exit codes: 0 after a clean stop, 1 runtime failure (systemd restarts), 78 configuration
error (systemd does not restart).
`;

const versionUsage = `Usage:
  tagd version   print the version (also tagd --version, tagd -v)
`;

/**
 * Each command's usage, printed by `tagd COMMAND --help` and `tagd help COMMAND`. A Map, not an
 * object literal: a command word like `constructor` or `toString` must not find Object's own.
 */
const commandUsages = new Map<string, string>([
  ['start', startUsage],
  ['profile', profileUsage],
  ['users', usersUsage],
  ['tokens', tokensUsage],
  ['opcua', opcuaUsage],
  ['status', statusUsage],
  ['version', versionUsage],
]);

/** Runs the command line; returns when a non-daemon command is done. */
export async function cli(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'version':
    case '--version':
    case '-v':
      if (wantsHelp(rest)) return help(command);
      if (command === 'version' && rest.length > 0) return usageError('usage: tagd version');
      process.stdout.write(`${version}\n`);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      const [topic, ...extra] = rest;
      if (topic === undefined) {
        process.stdout.write(usage);
        return;
      }
      if (extra.length > 0 || !commandUsages.has(topic)) {
        return usageError(
          `no help on '${rest.join(' ')}'; commands: ${[...commandUsages.keys()].join(', ')}`,
        );
      }
      return help(topic);
    }
  }
  if (!commandUsages.has(command)) return usageError(`unknown command '${command}'`);
  if (wantsHelp(rest)) return help(command);
  // Every command below may log (the daemon, the audit lines of the account commands): a level
  // pino does not know is a configuration error, said in tagd's words instead of pino's stack.
  const levelProblem = logLevelProblem(process.env.TAGD_LOG_LEVEL);
  if (levelProblem !== undefined) {
    process.stderr.write(`tagd: ${levelProblem}\n`);
    process.exitCode = exitCodes.config;
    return;
  }
  switch (command) {
    case 'start':
      return start(rest);
    case 'profile':
      return profileCommand(rest);
    case 'status':
      return statusCommand(rest);
    case 'users':
      return usersCommand(rest);
    case 'tokens':
      return tokensCommand(rest);
    case 'opcua':
      return opcuaCommand(rest);
    default:
      // Every name in commandUsages has a case above: this is a programming error.
      throw new Error(`unreachable: no handler for the command '${command}'`);
  }
}

/** `--help` or `-h` among the arguments (before a `--`). */
function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

function help(command: string): void {
  process.stdout.write(commandUsages.get(command) ?? usage);
}

async function start(args: string[]): Promise<void> {
  let values: { profile?: string; listen?: string; 'extensions-listen'?: string; demo?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        profile: { type: 'string' },
        listen: { type: 'string' },
        'extensions-listen': { type: 'string' },
        demo: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    if (isParseArgsError(error)) return usageError((error as Error).message, startUsage);
    throw error;
  }
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  if (listen === null) {
    return usageError(`--listen takes HOST:PORT, got '${values.listen}'`, startUsage);
  }
  const extensionsText = values['extensions-listen'];
  const extensionsListen = extensionsText === undefined ? undefined : parseListen(extensionsText);
  if (extensionsListen === null) {
    return usageError(`--extensions-listen takes HOST:PORT, got '${extensionsText}'`, startUsage);
  }
  if (values.demo && values.profile) {
    return usageError('--demo and --profile exclude each other', startUsage);
  }
  const stateDir = resolveStateDir();
  const recentEvents = new RecentEvents();
  const logger = createLogger({ recentEvents });
  const demo = values.demo ? await prepareDemoProfile(stateDir) : undefined;
  if (demo && demo.added.length > 0) {
    logger.info(
      { file: demo.file, sections: demo.added },
      'added the demo sections the copy lacked (new in config/demo.json since it was made)',
    );
  }
  const profileFile =
    demo?.file ?? resolve(values.profile ?? process.env.TAGD_PROFILE ?? 'config/profile.json');
  // Loaded here, not at the top: the daemon imports every component, which costs the other
  // commands (users, tokens, version, help) about 0.6 s of CPU for nothing.
  const { runDaemon } = await import('./main.js');
  await runDaemon({
    profileFile,
    stateDir,
    logger,
    recentEvents,
    ...(listen ? { listen } : {}),
    ...(extensionsListen ? { extensionsListen } : {}),
    ...(process.env.CREDENTIALS_DIRECTORY
      ? { credentialsDir: process.env.CREDENTIALS_DIRECTORY }
      : {}),
  });
}

function usageError(message: string, text = usage): void {
  process.stderr.write(`tagd: ${message}\n\n${text}`);
  process.exitCode = exitCodes.usage;
}

cli(process.argv.slice(2)).catch((error: unknown) => {
  // A wrong command line that a command did not catch itself is still a usage error.
  process.stderr.write(`tagd: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = isParseArgsError(error) ? exitCodes.usage : exitCodes.failure;
});
