import { createServer } from 'node:https';
import type { SecureVersion } from 'node:tls';
import { loadHttpsCredentials } from './https-credentials.js';
import {
  BoundListener,
  bindServer,
  guardRequests,
  type ListenerOptions,
  serverOptions,
  watchServer,
} from './server-lifecycle.js';

/** Options of {@link HttpsListener}; the connection limits default as in {@link ConnectionLimits}. */
export interface HttpsListenerOptions extends ListenerOptions {
  /** PEM certificate chain file: the server certificate first, then any intermediates. */
  certFile: string;
  /** PEM private key file of the certificate, encrypted or not. */
  keyFile: string;
  /** Passphrase of an encrypted private key; never logged nor put in an error message. */
  keyPassphrase?: string;
  /** Oldest TLS version accepted. Default: `TLSv1.2`. */
  minVersion?: 'TLSv1.2' | 'TLSv1.3';
  /**
   * A client that has not completed the TLS handshake within this time is disconnected, ms.
   * Default 10000 (node's own default is 120 s, long enough for idle sockets to fill the cap).
   */
  handshakeTimeoutMs?: number;
  /** Epoch ms now, to warn about an expired certificate. Default: Date.now. */
  now?: () => number;
}

/**
 * HTTPS listener for the plant network: the same app as the loopback HTTP listener, behind TLS
 * with the certificate and key files the profile names. The files are read and checked at
 * start, so a missing file, a key that does not fit the certificate or a wrong passphrase stops
 * the start-up with a message naming the file instead of failing on the first connection.
 */
export class HttpsListener extends BoundListener {
  constructor(private readonly options: HttpsListenerOptions) {
    super('https', options.drainMs);
  }

  /**
   * Reads the certificate and key, then binds the port.
   * @throws ListenerError when a file is missing, unreadable or unusable, the passphrase is
   *   wrong, or the port cannot be bound.
   */
  async start(): Promise<void> {
    if (this.server) return;
    const { host, port, logger } = this.options;
    const minVersion: SecureVersion = this.options.minVersion ?? 'TLSv1.2';
    const { credentials, expires } = await this.loadCredentials(minVersion);
    const server = createServer(
      {
        ...credentials,
        minVersion,
        handshakeTimeout: this.options.handshakeTimeoutMs ?? 10_000,
        ...serverOptions(this.options),
      },
      guardRequests(this.options.handler),
    );
    watchServer(server, this.options, logger);
    // A failed or timed-out handshake (scanner, untrusted client, plain HTTP on the port, a
    // client that never speaks) only ends that socket.
    server.on('tlsClientError', (error, socket) => {
      logger.debug({ err: error, remoteAddress: socket.remoteAddress }, 'TLS handshake failed');
    });
    await bindServer(server, host, port, 'HTTPS');
    this.server = server;
    logger.info(
      { url: this.url(), minVersion, certificateExpires: expires },
      `${this.options.label ?? 'API'} listening`,
    );
  }

  // The reading and checks live in https-credentials.ts: `tagd profile check` runs them too.
  private async loadCredentials(minVersion: SecureVersion) {
    const { certFile, keyFile, keyPassphrase, logger } = this.options;
    const loaded = await loadHttpsCredentials(
      { certFile, keyFile, ...(keyPassphrase !== undefined ? { keyPassphrase } : {}), minVersion },
      this.options.now?.() ?? Date.now(),
    );
    if (loaded.expired) {
      // Still started: clients that pin or ignore expiry keep working, and the log says why others fail.
      logger.warn(
        { certFile, expired: loaded.expires },
        'the HTTPS certificate has expired: clients will refuse the connection',
      );
    }
    return loaded;
  }
}
