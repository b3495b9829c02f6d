/**
 * `tagd users …`: accounts on the state directory (docs/cli.md). Works whether or not the daemon runs; the daemon follows
 * users.json and applies a change at once, so a disabled account's tokens die immediately.
 * stdout carries only what the operator asked for (a table, a password shown once, a QR code);
 * notes and the JSON audit lines go to stderr.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { passwordProblems } from '../auth/account-service.js';
import { generatePassword } from '../auth/password.js';
import { type RoleName, roleNames } from '../auth/permissions.js';
import { usernamePattern } from '../auth/user-management.js';
import {
  type AccountTools,
  CommandFailure,
  CommandUsageError,
  openAccountTools,
  runCommand,
} from './state-dir.js';

/** Usage of `tagd users`, printed with every usage error. */
export const usersUsage = `Usage:
  tagd users add NAME [--roles ROLE[,ROLE…]] [--service]
                                     create an account (default role: Viewers). A user's
                                     password is the first line of stdin when stdin is not a
                                     terminal; otherwise one is generated, printed once, and
                                     must be changed at first sign-in. --service: an account
                                     without password that uses 'tagd tokens generate'
  tagd users list                    list accounts (never hashes or secrets)
  tagd users disable NAME            block an account; its tokens stop working at once
  tagd users enable NAME             let a disabled account in again
  tagd users roles NAME ROLE[,ROLE…] replace an account's roles; its tokens stop working
  tagd users passwd NAME             set a new password (stdin, or generated and printed
                                     once); the account's tokens stop working
  tagd users 2fa enable NAME         enrol TOTP two-factor: prints the otpauth:// URI and a
                                     QR code for an authenticator app
  tagd users 2fa disable NAME        remove two-factor
  tagd users unlock NAME             clear the account's failed sign-ins (429 lockout); a
                                     running daemon applies it at the account's next attempt

Roles: ${roleNames.join(', ')}
State directory: TAGD_STATE_DIR (default ./var)
`;

/** Runs `tagd users ARGS…`; sets process.exitCode (0 ok, 1 failure, 2 usage error). */
export function usersCommand(args: string[]): Promise<void> {
  return runCommand(usersUsage, async () => {
    const [sub, ...rest] = args;
    switch (sub) {
      case 'add': {
        // Parsed first: a usage error leaves the state directory untouched.
        const request = parseAdd(rest);
        return withTools((tools) => add(tools, request), true);
      }
      case 'list':
        expectPositionals(rest, 0, 'tagd users list');
        return withTools((tools) => list(tools));
      case 'disable':
      case 'enable': {
        const [name] = expectPositionals(rest, 1, `tagd users ${sub} NAME`);
        return withTools((tools) => setDisabled(tools, name, sub === 'disable'));
      }
      case 'roles': {
        const [name, list] = expectPositionals(rest, 2, 'tagd users roles NAME ROLE[,ROLE…]');
        const roles = parseRoles(list);
        return withTools((tools) => setRoles(tools, name, roles));
      }
      case 'passwd': {
        const [name] = expectPositionals(rest, 1, 'tagd users passwd NAME');
        return withTools((tools) => setPassword(tools, name));
      }
      case 'unlock': {
        const [name] = expectPositionals(rest, 1, 'tagd users unlock NAME');
        return withTools((tools) => unlock(tools, name));
      }
      case '2fa': {
        const [action, ...more] = rest;
        if (action !== 'enable' && action !== 'disable') {
          throw new CommandUsageError('usage: tagd users 2fa enable|disable NAME');
        }
        const [name] = expectPositionals(more, 1, `tagd users 2fa ${action} NAME`);
        return withTools((tools) =>
          action === 'enable' ? enableTwoFactor(tools, name) : disableTwoFactor(tools, name),
        );
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(usersUsage);
        return;
      default:
        throw new CommandUsageError(`unknown users command '${sub}'`);
    }
  });
}

async function withTools(
  body: (tools: AccountTools) => Promise<void>,
  create = false,
): Promise<void> {
  const tools = await openAccountTools({ create });
  try {
    await body(tools);
  } finally {
    await tools.close();
  }
}

function expectPositionals(args: string[], count: 0, usage: string): [];
function expectPositionals(args: string[], count: 1, usage: string): [string];
function expectPositionals(args: string[], count: 2, usage: string): [string, string];
function expectPositionals(args: string[], count: number, usage: string): string[] {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
  if (positionals.length !== count) throw new CommandUsageError(`usage: ${usage}`);
  return positionals;
}

/**
 * Parses `A,B` into built-in role names, without duplicates.
 * @throws CommandUsageError naming the unknown roles and listing the known ones.
 */
function parseRoles(text: string | undefined): RoleName[] {
  const names = (text ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) {
    throw new CommandUsageError(`no role given; roles: ${roleNames.join(', ')}`);
  }
  const unknown = names.filter((name) => !(roleNames as string[]).includes(name));
  if (unknown.length > 0) {
    throw new CommandUsageError(
      `unknown role${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `'${name}'`).join(', ')}; roles: ${roleNames.join(', ')}`,
    );
  }
  return [...new Set(names)] as RoleName[];
}

interface AddRequest {
  name: string;
  roles: RoleName[];
  service: boolean;
}

function parseAdd(args: string[]): AddRequest {
  const { values, positionals } = parseArgs({
    args,
    options: { roles: { type: 'string' }, service: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  });
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0) {
    throw new CommandUsageError('usage: tagd users add NAME [--roles ROLE[,ROLE…]] [--service]');
  }
  if (!usernamePattern.test(name)) {
    throw new CommandUsageError(
      `invalid account name '${name}': 1 to 64 letters, digits, '_', '.', '@' or '-', not starting with '-'`,
    );
  }
  const roles = values.roles === undefined ? (['Viewers'] as RoleName[]) : parseRoles(values.roles);
  return { name, roles, service: values.service };
}

async function add(tools: AccountTools, { name, roles, service }: AddRequest): Promise<void> {
  const { users, management } = tools;
  // Checked before reading a password, so a taken name fails without consuming stdin.
  // In any case: names are case-insensitive (user-store.ts).
  const taken = users.findByName(name);
  if (taken) {
    throw new CommandFailure(
      taken.username === name
        ? `An account named '${name}' exists.`
        : `An account named '${taken.username}' exists (names are compared without case).`,
    );
  }
  const firstAccount = users.list().length === 0;

  if (service) {
    await management.create({ username: name, roles, service: true });
    note(
      `Created service account '${name}' (${roles.join(', ')}). Get its token with: tagd tokens generate ${name}`,
    );
  } else {
    const secret = await obtainPassword();
    // A generated password is made by the service, which also requires its change.
    const { oneTimePassword } = await management.create({
      username: name,
      roles,
      service: false,
      ...(secret.generated ? {} : { password: secret.password }),
    });
    if (oneTimePassword !== undefined) {
      note(
        `Created user '${name}' (${roles.join(', ')}). Its password, shown only this once (to be changed at first sign-in):`,
      );
      process.stdout.write(`${oneTimePassword}\n`);
    } else {
      note(`Created user '${name}' (${roles.join(', ')}) with the password from stdin.`);
    }
  }
  if (firstAccount) {
    // createInitialAdmin runs only on an empty database.
    note("This is the first account: the daemon's first start will not create 'admin'.");
  }
}

async function list(tools: AccountTools): Promise<void> {
  const rows = tools.users.list().map((user) => [
    user.username,
    user.kind,
    user.roles.join(','),
    // In the words of the console's Users page (accounts.ts stateOf), so both agree.
    user.disabled
      ? 'disabled'
      : user.requiresPasswordChange
        ? 'enabled, password change due'
        : 'enabled',
    user.twoFactor ? 'on' : 'off',
  ]);
  if (rows.length === 0) {
    note(`No accounts in ${tools.stateDir}; the daemon creates 'admin' on its first start.`);
    return;
  }
  process.stdout.write(table([['NAME', 'KIND', 'ROLES', 'STATUS', '2FA'], ...rows]));
}

async function setDisabled(tools: AccountTools, name: string, disabled: boolean): Promise<void> {
  const user = tools.users.require(name);
  const state = disabled ? 'disabled' : 'enabled';
  if (user.disabled === disabled) {
    note(`'${name}' is already ${state}.`);
    return;
  }
  // Enabling does not bump: tokens from before the disable were voided by the disable itself.
  await tools.management.update(name, { enabled: !disabled });
  note(disabled ? `Disabled '${name}'; its tokens no longer work.` : `Enabled '${name}'.`);
}

async function setRoles(tools: AccountTools, name: string, roles: RoleName[]): Promise<void> {
  const before = tools.users.require(name).tokenVersion;
  // Spec §3.2: a role change voids a service token; every other token goes too, so no session
  // keeps permissions it no longer has.
  const account = await tools.management.update(name, { roles });
  if (tools.users.require(name).tokenVersion === before) {
    note(`Roles of '${name}' unchanged: ${account.roles.join(', ')}.`);
    return;
  }
  note(`Roles of '${name}': ${roles.join(', ')}; its tokens no longer work.`);
}

async function setPassword(tools: AccountTools, name: string): Promise<void> {
  const user = tools.users.require(name);
  if (user.kind !== 'user') {
    throw new CommandFailure(
      `'${name}' is a service account: it has no password. Use: tagd tokens generate ${name}`,
    );
  }
  const secret = await obtainPassword();
  const result = await tools.management.setPassword(
    name,
    secret.generated ? undefined : secret.password,
  );
  if (result.generated) {
    note(
      `New password of '${name}', shown only this once (to be changed at first sign-in); its tokens no longer work:`,
    );
    process.stdout.write(`${result.password}\n`);
  } else {
    note(`Password of '${name}' set from stdin; its tokens no longer work.`);
  }
}

/**
 * The failed sign-ins are counted in the daemon's memory, not on disk, so the command leaves a
 * new mark in the account's record; the daemon follows users.json and clears the account's
 * count when it sees a mark it has not applied.
 */
async function unlock(tools: AccountTools, name: string): Promise<void> {
  const user = tools.users.require(name);
  if (user.kind !== 'user') {
    throw new CommandFailure(
      `'${name}' is a service account: it does not sign in with a password.`,
    );
  }
  await tools.users.update(user, { signInUnlock: randomUUID() }, false);
  tools.audit.info({ event: 'account-unlocked', username: name }, 'failed sign-ins cleared');
  note(
    `Cleared the failed sign-ins of '${name}'; a running daemon applies it at the next attempt. Limits per client address stay (15 minutes).`,
  );
}

async function enableTwoFactor(tools: AccountTools, name: string): Promise<void> {
  const user = tools.users.require(name);
  if (user.kind !== 'user') {
    throw new CommandFailure(`'${name}' is a service account: it does not sign in with a code.`);
  }
  const { uri, replaced } = await tools.management.enableTwoFactor(name);
  note(
    `${replaced ? 'Replaced the' : 'Enabled'} two-factor of '${name}'; its tokens no longer work. Scan the code or enter the URI in an authenticator app (shown only this once):`,
  );
  process.stdout.write(`${uri}\n`);
  // Imported here: every other command, and `tagd start` (which loads this module), needs none.
  const { default: qrcode } = await import('qrcode-terminal');
  qrcode.generate(uri, { small: true }, (code) => process.stdout.write(`${code}\n`));
}

async function disableTwoFactor(tools: AccountTools, name: string): Promise<void> {
  if (!(await tools.management.removeTwoFactor(name))) {
    note(`'${name}' has no two-factor.`);
    return;
  }
  note(`Removed two-factor of '${name}'; its tokens no longer work.`);
}

/**
 * The new password: the first line of stdin when stdin is not a terminal (a script pipes it
 * in), else a random one to print once. A stdin that ends without a single byte (`</dev/null`,
 * a job without input) counts as no password given, so it is generated too.
 * @param input where a piped password comes from. Default: `process.stdin`.
 * @throws CommandFailure when the piped password is too short or too long.
 */
export async function obtainPassword(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
): Promise<{ password: string; generated: boolean }> {
  if (!input.isTTY) {
    const line = await readFirstLine(input);
    if (line !== undefined) {
      const problems = passwordProblems(line);
      if (problems.length > 0) {
        throw new CommandFailure(
          'The password from stdin is not acceptable.',
          problems.map((problem) => problem.message),
        );
      }
      return { password: line, generated: false };
    }
  }
  return { password: generatePassword(), generated: true };
}

/** The first line of a stream without its line ending, or undefined when it sent nothing. */
async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string | undefined> {
  let text = '';
  let received = false;
  stream.setEncoding('utf8');
  for await (const chunk of stream) {
    received = true;
    text += chunk as string;
    // Stop at the first line: the writer may keep the pipe open (ssh without a terminal).
    if (text.includes('\n')) break;
  }
  if (!received) return undefined;
  return (text.split('\n')[0] ?? '').replace(/\r$/, '');
}

function note(message: string): void {
  process.stderr.write(`${message}\n`);
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths?.[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
    .concat('\n');
}
