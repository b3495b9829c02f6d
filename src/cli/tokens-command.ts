/**
 * `tagd tokens …`: service account tokens. The token is the
 * only thing on stdout, so `TOKEN=$(tagd tokens generate NAME)` captures it; it is shown once
 * and never stored or logged.
 */
import { parseArgs } from 'node:util';
import { CommandFailure, CommandUsageError, openAccountTools, runCommand } from './state-dir.js';

/** Usage of `tagd tokens`, printed with every usage error. */
export const tokensUsage = `Usage:
  tagd tokens generate NAME   print a new token of service account NAME (shown only this
                              once); its previous token stops working at once

State directory: TAGD_STATE_DIR (default ./var)
`;

/** Runs `tagd tokens ARGS…`; sets process.exitCode (0 ok, 1 failure, 2 usage error). */
export function tokensCommand(args: string[]): Promise<void> {
  return runCommand(tokensUsage, async () => {
    const [sub, ...rest] = args;
    switch (sub) {
      case 'generate': {
        const { positionals } = parseArgs({
          args: rest,
          options: {},
          allowPositionals: true,
          strict: true,
        });
        const [name, ...extra] = positionals;
        if (name === undefined || extra.length > 0) {
          throw new CommandUsageError('usage: tagd tokens generate NAME');
        }
        return generate(name);
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(tokensUsage);
        return;
      default:
        throw new CommandUsageError(`unknown tokens command '${sub}'`);
    }
  });
}

async function generate(name: string): Promise<void> {
  const tools = await openAccountTools();
  try {
    const user = tools.users.require(name);
    if (user.kind !== 'service') {
      throw new CommandFailure(
        `'${name}' is not a service account; only service accounts have generated tokens.`,
        [
          'A user signs in with its password (POST /api/v2/Users/Authenticate).',
          `Create a service account with: tagd users add NAME --service --roles ${user.roles.join(',')}`,
        ],
      );
    }
    // Voids the previous token (bumps the token version) and writes the audit line.
    const token = await tools.management.generateToken(name);
    process.stderr.write(
      `Token of service account '${name}' (${user.roles.join(', ')}), shown only this once; its previous token no longer works:\n`,
    );
    if (user.disabled) {
      process.stderr.write(`Note: '${name}' is disabled; the token works once it is enabled.\n`);
    }
    process.stdout.write(`${token}\n`);
  } finally {
    await tools.close();
  }
}
