#!/usr/bin/env node
/**
 * The `tagd` command. `start` hands over to main.ts, which owns the process from then on;
 * the other commands set process.exitCode and return.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { opcuaCommand } from './cli/opcua-command.js';
import { resolveStateDir } from './cli/state-dir.js';
import { tokensCommand } from './cli/tokens-command.js';
import { usersCommand } from './cli/users-command.js';
import { prepareDemoProfile } from './demo-profile.js';
import { ProfileInvalidError, TagdError } from './errors.js';
import { parseListen } from './listen-address.js';
import { createLogger } from './logger.js';
import { runDaemon } from './main.js';
import { checkProfile } from './profile/check-profile.js';
import { DurableJsonFile } from './profile/durable-json-file.js';
import { SecretBox } from './profile/secret-box.js';
import { version } from './version.js';

const usage = `tagd ${version}: edge gateway daemon

Usage:
  tagd start [--profile FILE] [--listen HOST:PORT]   run the daemon
  tagd start --demo [--listen HOST:PORT]             run a copy of the demo profile (made once
                                                     in the state directory)
  tagd profile check FILE                            list every error in a profile
  tagd users add|list|disable|enable|roles|passwd|2fa|unlock …
                                                     manage accounts ('tagd users help')
  tagd tokens generate NAME                          print a service account's token
  tagd opcua list|trust FILE|THUMBPRINT              OPC UA server certificates: list,
                                                     trust a rejected one ('tagd opcua help')
  tagd version                                       print the version

Environment:
  TAGD_PROFILE     profile path when --profile is not given (default: config/profile.json)
  TAGD_STATE_DIR   state directory: keys, users, history (default: ./var)
  TAGD_LOG_LEVEL   trace, debug, info, warn, error (default: info)
`;

/** Runs the command line; returns when a non-daemon command is done. */
export async function cli(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(rest);
    case 'profile':
      return profileCommand(rest);
    case 'users':
      return usersCommand(rest);
    case 'tokens':
      return tokensCommand(rest);
    case 'opcua':
      return opcuaCommand(rest);
    case 'version':
    case '--version':
      process.stdout.write(`${version}\n`);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return;
    default:
      return usageError(`unknown command '${command}'`);
  }
}

async function start(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { profile: { type: 'string' }, listen: { type: 'string' }, demo: { type: 'boolean' } },
    strict: true,
  });
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  if (listen === null) return usageError(`--listen takes HOST:PORT, got '${values.listen}'`);
  if (values.demo && values.profile) return usageError('--demo and --profile exclude each other');
  const stateDir = resolveStateDir();
  const profileFile = values.demo
    ? await prepareDemoProfile(stateDir)
    : resolve(values.profile ?? process.env.TAGD_PROFILE ?? 'config/profile.json');
  await runDaemon({
    profileFile,
    stateDir,
    logger: createLogger(),
    ...(listen ? { listen } : {}),
    ...(process.env.CREDENTIALS_DIRECTORY
      ? { credentialsDir: process.env.CREDENTIALS_DIRECTORY }
      : {}),
  });
}

async function profileCommand(args: string[]): Promise<void> {
  const [sub, file, ...extra] = args;
  if (sub !== 'check' || file === undefined || extra.length > 0) {
    return usageError('usage: tagd profile check FILE');
  }
  const path = resolve(file);
  try {
    const document = await new DurableJsonFile<unknown>(path).read();
    const secretBox = await SecretBox.openExisting(
      resolveStateDir(),
      process.env.CREDENTIALS_DIRECTORY,
    );
    const { errors, uncheckedSecrets } = checkProfile(document, secretBox);
    if (uncheckedSecrets.length > 0) {
      process.stderr.write(
        `note: no sealing key in TAGD_STATE_DIR, so these sealed secrets were not checked: ${uncheckedSecrets.join(', ')}\n`,
      );
    }
    if (errors.length > 0) throw new ProfileInvalidError(path, errors);
    const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);
    const profile = document as {
      drivers?: { tags?: unknown[] }[];
      collections?: unknown[];
      publishers?: { webhooks?: unknown[] };
    };
    const drivers = profile.drivers ?? [];
    const tags = drivers.reduce((sum, driver) => sum + count(driver.tags), 0);
    process.stdout.write(
      `${path}: valid (${drivers.length} drivers, ${tags} tags, ${count(profile.collections)} collections, ${count(profile.publishers?.webhooks)} webhook publishers)\n`,
    );
  } catch (error) {
    if (!(error instanceof TagdError)) throw error;
    process.stderr.write(`${error.message}\n`);
    if (error instanceof ProfileInvalidError) {
      for (const problem of error.errors)
        process.stderr.write(`  ${problem.path}: ${problem.message}\n`);
    }
    process.exitCode = 1;
  }
}

function usageError(message: string): void {
  process.stderr.write(`tagd: ${message}\n\n${usage}`);
  process.exitCode = 2;
}

cli(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`tagd: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
