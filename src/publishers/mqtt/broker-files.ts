/**
 * The files an MQTT publisher names, read and checked once for every use: the extra CAs
 * (`caFile`) and the client certificate and key of `Client certificate` authentication. The same
 * reading answers the API's save (400 naming the field), `tagd profile check`, the start-up and
 * reload checks, and the publisher's start, so a file the TLS client would throw on (a key that
 * is not PEM, a pair that does not match, a wrong passphrase) never reaches the mqtt client.
 */
import { resolve } from 'node:path';
import type { FieldError } from '../../errors.js';
import { readCertificateAndKey } from '../../profile/certificate-files.js';
import { readCaFile } from '../webhook/webhook-publisher.js';
import type { BrokerTlsAndAuth } from './broker-connection.js';
import type { MqttConfig } from './schema.js';

/** The contents of an MQTT publisher's files, or what is wrong with them. */
export interface BrokerFiles {
  /** Extra CA certificates (PEM): the `caFile` contents. */
  extraCa?: string;
  /** Client certificate and key (PEM), with `Client certificate` authentication. */
  cert?: string;
  key?: string;
  /** Every problem found, its path relative to the publisher's configuration. */
  problems: FieldError[];
}

/**
 * Reads and checks every file of an MQTT publisher's configuration (or of an MQTT driver's,
 * which names the same fields).
 * @param baseDir folder a relative file name is resolved against (the profile's).
 */
export async function readBrokerFiles(
  config: Pick<MqttConfig, 'caFile' | 'authentication'>,
  baseDir: string,
): Promise<BrokerFiles> {
  const files: BrokerFiles = { problems: [] };
  if (config.caFile !== undefined) {
    try {
      files.extraCa = await readCaFile(resolve(baseDir, config.caFile));
    } catch (error) {
      files.problems.push({ path: 'caFile', message: (error as Error).message });
    }
  }
  const authentication = config.authentication;
  if (authentication.mode === 'Client certificate') {
    const pair = await readCertificateAndKey({
      certFile: resolve(baseDir, authentication.certFile),
      keyFile: resolve(baseDir, authentication.keyFile),
      ...(authentication.keyPassphrase !== undefined
        ? { passphrase: authentication.keyPassphrase }
        : {}),
      fields: {
        cert: 'authentication.certFile',
        key: 'authentication.keyFile',
        passphrase: 'authentication.keyPassphrase',
      },
      names: { cert: 'the client certificate', key: 'the client key' },
      tls: true,
    });
    if (pair.ok) {
      files.cert = pair.cert;
      files.key = pair.key;
    } else files.problems.push(...pair.problems);
  }
  return files;
}

/**
 * The credentials and trust of a broker connection, from the configuration and its files
 * (for a Sparkplug host driver, which names its broker as a publisher does).
 * @throws Error naming every field whose file cannot be used.
 */
export async function readBrokerAuth(
  config: Pick<MqttConfig, 'caFile' | 'authentication'>,
  baseDir: string,
): Promise<BrokerTlsAndAuth> {
  const files = await readBrokerFiles(config, baseDir);
  if (files.problems.length > 0) {
    throw new Error(
      files.problems.map((problem) => `${problem.path}: ${problem.message}`).join(' '),
    );
  }
  const auth: BrokerTlsAndAuth = {};
  if (files.extraCa !== undefined) auth.extraCa = files.extraCa;
  const authentication = config.authentication;
  if (authentication.mode === 'Username password') {
    auth.username = authentication.username;
    auth.password = authentication.password;
  } else if (authentication.mode === 'Client certificate') {
    if (files.cert !== undefined) auth.cert = files.cert;
    if (files.key !== undefined) auth.key = files.key;
    if (authentication.keyPassphrase !== undefined) auth.passphrase = authentication.keyPassphrase;
  }
  return auth;
}
