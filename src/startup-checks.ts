/**
 * The checks `tagd start` makes on a valid profile before anything starts, which `tagd profile
 * check` runs too, so a profile the check calls valid does start: the listeners, the API's and
 * the extensions server's (no plain HTTP on a non-loopback address without allowInsecure;
 * HTTPS certificate and key usable; no port shared), every file the profile names (license,
 * DBC, CAN replay log, OPC UA client certificate and key, a publisher's caFile, an MQTT client
 * certificate and key) a regular file of bounded size that holds what it should (certificates
 * parsed, keys parsed and decrypted with their passphrase and matched to their certificate:
 * profile/certificate-files.ts), and every extension app's folder a directory.
 *
 * Each problem says what start does about it: refuse to start (exit 78), or run without the
 * part at fault (a driver or an app left out, a publisher Off, no license) as it always has, so
 * one bad device file does not take the whole gateway down.
 */
import type { KeyObject } from 'node:crypto';
import { resolve } from 'node:path';
import { isLoopback } from './api/http-listener.js';
import { loadHttpsCredentials } from './api/https-credentials.js';
import { parseDbc } from './dbc/parse-dbc.js';
import type { FieldError } from './errors.js';
import { checkExtensions } from './extensions/extensions-checks.js';
import { loadLicense, vendorPublicKey } from './license/license.js';
import { readCertificateAndKey } from './profile/certificate-files.js';
import {
  checkProfileFile,
  openProfileFile,
  profileFileLimits,
  readProfileFile,
} from './profile/profile-file.js';
import type { Profile } from './profile/schema.js';
import { readBrokerFiles } from './publishers/mqtt/broker-files.js';
import { readCaFile } from './publishers/webhook/webhook-publisher.js';

/** What `tagd start` does about a problem. */
export type StartupEffect =
  /** Start-up is refused (exit 78). */
  | 'refused'
  /** The driver is left out; the others run. */
  | 'driver-left-out'
  /** The publisher does not run: status Error, saying why. */
  | 'publisher-error'
  /** The extensions server runs without this app: its path answers 404. */
  | 'app-left-out'
  /** tagd runs unlicensed: licensed features are unavailable. */
  | 'unlicensed';

/** One problem found by {@link checkStartup}. */
export interface StartupProblem extends FieldError {
  effect: StartupEffect;
  /** Index in `drivers[]` of the driver at fault, for `driver-left-out`. */
  driver?: number;
  /** Index in `extensions.apps[]` of the app at fault, for `app-left-out`. */
  app?: number;
}

/** Options of {@link checkStartup}. */
export interface StartupCheckOptions {
  /** Folder relative paths in the profile are resolved from: the profile file's. */
  profileFolder: string;
  /** `--listen`, which replaces the profile's HTTP host and port. */
  listen?: { host: string; port: number };
  /** `--extensions-listen`, which replaces the host and port of `extensions.listen`. */
  extensionsListen?: { host: string; port: number };
  /** Keys a license signature is checked with. Default: the vendor key. */
  licenseKeys?: readonly KeyObject[];
  /** Epoch ms, for license expiry. Default: Date.now(). */
  now?: number;
  /**
   * `full` (default, `tagd profile check`): read and parse every file. `files` (`tagd start`):
   * skip what the daemon reads right after anyway, so nothing is read twice: the license is
   * not checked (the daemon loads it and logs its problem), and the DBC is only checked to be
   * a regular file within its size limit (the CAN driver parses it; a parse error leaves the
   * driver out there). The HTTPS credentials are still loaded: a problem there must refuse the
   * start with every problem listed.
   */
  depth?: 'full' | 'files';
}

/** How `tagd profile check` words each effect after a problem. */
export const effectText: Record<StartupEffect, string> = {
  refused: 'tagd start refuses to start',
  'driver-left-out': 'tagd start leaves this driver out',
  'publisher-error': 'this publisher does not start (status Error)',
  'app-left-out': 'tagd start leaves this app out, its path answering 404',
  unlicensed: 'tagd runs unlicensed',
};

/**
 * Runs every start-up check on a validated profile and lists every problem found.
 * Files are opened non-blocking and read only when regular and within their size limit.
 */
export async function checkStartup(
  profile: Profile,
  options: StartupCheckOptions,
): Promise<StartupProblem[]> {
  const problems: StartupProblem[] = [];
  const path = (file: string) => resolve(options.profileFolder, file);

  const http = { ...profile.server.http, ...options.listen };
  const plain = [{ at: 'server.http', listener: http, override: options.listen, flag: '--listen' }];
  const secure = [{ at: 'server.https', listener: profile.server.https }];
  const extensions = profile.extensions;
  if (extensions) {
    const listen = { ...extensions.listen, ...options.extensionsListen };
    plain.push({
      at: 'extensions.listen',
      listener: listen,
      override: options.extensionsListen,
      flag: '--extensions-listen',
    });
    secure.push({ at: 'extensions.https', listener: extensions.https });
  }
  for (const { at, listener, override, flag } of plain) {
    if (!isLoopback(listener.host) && !listener.allowInsecure) {
      problems.push({
        path: `${at}.host`,
        message: `Plain HTTP on the non-loopback address ${listener.host}${override ? ` (${flag})` : ''} would carry passwords and tokens in clear: use the HTTPS listener, or set ${at}.allowInsecure to true.`,
        effect: 'refused',
      });
    }
  }

  for (const { at, listener: https } of secure) {
    if (!https) continue;
    const certFile = path(https.certFile);
    const keyFile = path(https.keyFile);
    const fileProblems = [
      await fileProblem(certFile, 'the HTTPS certificate file', `${at}.certFile`),
      await fileProblem(keyFile, 'the HTTPS private key file', `${at}.keyFile`),
    ].filter((problem) => problem !== undefined);
    for (const problem of fileProblems) problems.push({ ...problem, effect: 'refused' });
    if (fileProblems.length === 0) {
      try {
        await loadHttpsCredentials(
          {
            certFile,
            keyFile,
            ...(https.keyPassphrase !== undefined ? { keyPassphrase: https.keyPassphrase } : {}),
            minVersion: https.minVersion,
          },
          options.now ?? Date.now(),
        );
      } catch (error) {
        problems.push({ path: at, message: messageOf(error), effect: 'refused' });
      }
    }
  }

  if (extensions) {
    const listeners = [
      { at: 'server.http', ...http },
      ...(profile.server.https ? [{ at: 'server.https', ...profile.server.https }] : []),
      { at: 'extensions.listen', ...extensions.listen, ...options.extensionsListen },
      ...(extensions.https ? [{ at: 'extensions.https', ...extensions.https }] : []),
    ];
    problems.push(...(await checkExtensions(extensions, options.profileFolder, listeners)));
  }

  const full = (options.depth ?? 'full') === 'full';
  if (profile.license && full) {
    const license = await loadLicense(
      path(profile.license.file),
      options.licenseKeys ?? [vendorPublicKey],
      options.now ?? Date.now(),
    );
    if (license.problem !== undefined) {
      problems.push({ path: 'license.file', message: license.problem, effect: 'unlicensed' });
    }
  }

  for (const [index, driver] of profile.drivers.entries()) {
    if (!driver.enabled) continue;
    const at = `drivers[${index}]`;
    const found: (FieldError | undefined)[] = [];
    if (driver.type === 'can') {
      const dbcFile = path(driver.dbcFile);
      try {
        if (full) {
          parseDbc(await readProfileFile(dbcFile, 'the DBC file', profileFileLimits.dbc), dbcFile);
        } else {
          await checkProfileFile(dbcFile, 'the DBC file', profileFileLimits.dbc);
        }
      } catch (error) {
        found.push({ path: `${at}.dbcFile`, message: messageOf(error) });
      }
      if (driver.transport.kind === 'replay') {
        found.push(
          await fileProblem(
            path(driver.transport.file),
            'the CAN replay log',
            `${at}.transport.file`,
          ),
        );
      }
    }
    if (driver.type === 'opcua' && driver.certificateFile && driver.privateKeyFile) {
      const pair = await readCertificateAndKey({
        certFile: path(driver.certificateFile),
        keyFile: path(driver.privateKeyFile),
        fields: { cert: `${at}.certificateFile`, key: `${at}.privateKeyFile` },
        names: { cert: 'the OPC UA client certificate', key: 'the OPC UA client private key' },
        // node-opcua signs with RSA only and takes no passphrase.
        keyTypes: ['rsa'],
      });
      if (!pair.ok) found.push(...pair.problems);
    }
    if (driver.type === 'sparkplug' || driver.type === 'mqtt') {
      const files = await readBrokerFiles(driver, options.profileFolder);
      for (const problem of files.problems)
        found.push({ ...problem, path: `${at}.${problem.path}` });
    }
    for (const problem of found) {
      if (problem) problems.push({ ...problem, effect: 'driver-left-out', driver: index });
    }
  }

  for (const [index, webhook] of profile.publishers.webhooks.entries()) {
    if (webhook.caFile === undefined) continue;
    try {
      await readCaFile(path(webhook.caFile));
    } catch (error) {
      problems.push({
        path: `publishers.webhooks[${index}].caFile`,
        message: messageOf(error),
        effect: 'publisher-error',
      });
    }
  }
  for (const [index, mqtt] of profile.publishers.mqtt.entries()) {
    const { problems: found } = await readBrokerFiles(mqtt, options.profileFolder);
    for (const problem of found) {
      problems.push({
        path: `publishers.mqtt[${index}].${problem.path}`,
        message: problem.message,
        effect: 'publisher-error',
      });
    }
  }
  return problems;
}

// Opens a file the way its user will (without reading it), to report the same problem.
async function fileProblem(
  file: string,
  what: string,
  at: string,
): Promise<FieldError | undefined> {
  try {
    await (await openProfileFile(file, what)).close();
    return undefined;
  } catch (error) {
    return { path: at, message: messageOf(error) };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
