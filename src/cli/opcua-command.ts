/**
 * `tagd opcua …`: the OPC UA certificate store of the state directory (`<state>/opcua/pki`).
 * A server whose certificate is not trusted is refused and its certificate lands in
 * `rejected/`; `tagd opcua trust` moves it to `trusted/certs/` after the operator has checked
 * the thumbprint, and the driver connects at its next attempt (no restart needed). Plain file
 * work: node-opcua is not loaded.
 */
import { parseArgs } from 'node:util';
import {
  listPkiCertificates,
  opcuaPkiDir,
  type PkiCertificate,
  PkiSelectionError,
  trustCertificate,
} from '../../drivers/opcua/pki.js';
import {
  CommandFailure,
  CommandUsageError,
  checkStateDir,
  cliAuditLogger,
  resolveStateDir,
  runCommand,
} from './state-dir.js';

/** Usage of `tagd opcua`, printed with every usage error. */
export const opcuaUsage = `Usage:
  tagd opcua list                    list the trusted and rejected OPC UA server certificates
                                     with their thumbprints
  tagd opcua trust FILE|THUMBPRINT   trust a server certificate: a file of the rejected folder
                                     (path or name), any PEM/DER certificate file, or the
                                     thumbprint (at least 8 hex digits) of a rejected one

Certificates: TAGD_STATE_DIR/opcua/pki (default state directory ./var)
`;

/** Runs `tagd opcua ARGS…`; sets process.exitCode (0 ok, 1 failure, 2 usage error). */
export function opcuaCommand(args: string[]): Promise<void> {
  return runCommand(opcuaUsage, async () => {
    const [sub, ...rest] = args;
    switch (sub) {
      case 'list': {
        parseArgs({ args: rest, options: {}, strict: true });
        return list();
      }
      case 'trust': {
        const { positionals } = parseArgs({
          args: rest,
          options: {},
          allowPositionals: true,
          strict: true,
        });
        const [selector, ...extra] = positionals;
        if (selector === undefined || extra.length > 0) {
          throw new CommandUsageError('usage: tagd opcua trust FILE|THUMBPRINT');
        }
        return trust(selector);
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(opcuaUsage);
        return;
      default:
        throw new CommandUsageError(`unknown opcua command '${sub}'`);
    }
  });
}

async function list(): Promise<void> {
  const stateDir = resolveStateDir();
  await checkStateDir(stateDir, false);
  const certificates = await listPkiCertificates(opcuaPkiDir(stateDir));
  if (certificates.length === 0) {
    process.stderr.write(`No OPC UA server certificates in ${opcuaPkiDir(stateDir)}.\n`);
    return;
  }
  for (const certificate of certificates) process.stdout.write(describe(certificate));
}

async function trust(selector: string): Promise<void> {
  const stateDir = resolveStateDir();
  await checkStateDir(stateDir, false);
  const pkiDir = opcuaPkiDir(stateDir);
  try {
    const { certificate, action } = await trustCertificate(pkiDir, selector);
    if (action !== 'already') {
      cliAuditLogger().info(
        { thumbprint: certificate.thumbprint, subject: certificate.subject, action },
        'OPC UA server certificate trusted',
      );
    }
    const what =
      action === 'already'
        ? 'is already trusted'
        : action === 'moved'
          ? 'moved from rejected/ to trusted/; the driver uses it at its next connection attempt'
          : 'copied to trusted/; the driver uses it at its next connection attempt';
    process.stdout.write(describe(certificate));
    process.stderr.write(`Certificate ${certificate.thumbprint} ${what}.\n`);
  } catch (error) {
    if (error instanceof PkiSelectionError) {
      throw new CommandFailure(error.message, ["List the certificates with 'tagd opcua list'."]);
    }
    throw error;
  }
}

function describe(certificate: PkiCertificate): string {
  const subject = certificate.subject.split('\n').join(', ');
  return `${certificate.state.padEnd(8)} ${certificate.thumbprint}  ${subject}  valid to ${certificate.validTo}\n  ${certificate.file}\n`;
}
