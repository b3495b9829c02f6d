/**
 * The extensions server as a component: its plain HTTP listener and, when the profile has one,
 * its HTTPS listener, both made by the API's listener classes (same loopback rule, connection
 * caps, timeouts and early problem answers) around the extensions app.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ApiDeps } from '../api/api-deps.js';
import { HttpListener } from '../api/http-listener.js';
import { HttpsListener } from '../api/https-listener.js';
import type { RouteDefinition } from '../api/route.js';
import type { ExtensionApp } from './extension-apps.js';
import { createExtensionsApp } from './extensions-app.js';
import type { ExtensionsConfig } from './extensions-config.js';

/** Options of {@link ExtensionsServer}. */
export interface ExtensionsServerOptions {
  /** The profile's `extensions` section. */
  config: ExtensionsConfig;
  /** Folder the app folders and HTTPS files are resolved from: the profile file's. */
  profileFolder: string;
  /** The API's deps, shared with the main app (accounts, limiter, store). */
  deps: ApiDeps;
  /** The route list the main app serves; the enabled part of it is served here. */
  routes: readonly RouteDefinition[];
  logger: Logger;
  /** Replaces the host and port of `config.listen` (`--extensions-listen`, tests). */
  listen?: { host: string; port: number };
  /** Epoch ms now, to warn about an expired certificate. Default Date.now. */
  now?: () => number;
}

/** The running extensions server: start() binds its listeners, stop() closes them. */
export class ExtensionsServer {
  private http: HttpListener | undefined;
  private https: HttpsListener | undefined;

  constructor(private readonly options: ExtensionsServerOptions) {}

  /**
   * Binds the HTTP listener, then the HTTPS one when configured; a failure stops what started.
   * @throws ListenerError when a port cannot be bound or the HTTPS files are unusable.
   */
  async start(): Promise<void> {
    if (this.http) return;
    const { config, profileFolder, deps, routes, logger } = this.options;
    const apps: ExtensionApp[] = config.apps.map((app) => ({
      name: app.name,
      folder: resolve(profileFolder, app.folder),
      ...(app.csp !== undefined ? { csp: app.csp } : {}),
    }));
    const handler = createExtensionsApp(deps, routes, config, apps).callback();
    const http = new HttpListener({
      ...config.listen,
      ...this.options.listen,
      handler,
      logger,
      label: 'Extensions server',
    });
    await http.start();
    this.http = http;
    if (config.https) {
      const { certFile, keyFile, ...https } = config.https;
      const listener = new HttpsListener({
        ...https,
        certFile: resolve(profileFolder, certFile),
        keyFile: resolve(profileFolder, keyFile),
        handler,
        logger,
        label: 'Extensions server',
        ...(this.options.now ? { now: this.options.now } : {}),
      });
      try {
        await listener.start();
      } catch (error) {
        await this.stop();
        throw error;
      }
      this.https = listener;
    }
    logger.info(
      {
        url: this.url(),
        ...(this.https ? { httpsUrl: this.httpsUrl() } : {}),
        apps: apps.map((app) => `/${app.name}/`),
        enableApi: config.enableApi,
        enableDocs: config.enableDocs,
      },
      'extensions server ready',
    );
  }

  /** Closes the HTTPS, then the HTTP listener, letting open requests finish. Idempotent. */
  async stop(): Promise<void> {
    const { http, https } = this;
    this.http = undefined;
    this.https = undefined;
    await https?.stop();
    await http?.stop();
  }

  /** The HTTP listener's URL, e.g. `http://127.0.0.1:8081`; undefined while stopped. */
  url(): string | undefined {
    return this.http?.url();
  }

  /** The HTTPS listener's URL; undefined while stopped or without one. */
  httpsUrl(): string | undefined {
    return this.https?.url();
  }
}
