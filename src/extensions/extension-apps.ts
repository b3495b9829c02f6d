/**
 * The apps of the extensions server: each app's folder served at `/{name}/` through
 * {@link StaticFolder}, with the app's Content-Security-Policy.
 */
import type Koa from 'koa';
import type { Logger } from 'pino';
import { NotFoundError, RequestError } from '../errors.js';
import { parseRequestPath } from '../web/request-path.js';
import { StaticFolder } from '../web/static-files.js';
import { defaultAppCsp } from './extensions-config.js';

/** An app ready to serve: its folder resolved (absolute). */
export interface ExtensionApp {
  /** First path segment, e.g. `andon` for `/andon/`. Matched exactly (case too). */
  name: string;
  /** Absolute path of the app's folder. */
  folder: string;
  /** Content-Security-Policy of its files. Default {@link defaultAppCsp}. */
  csp?: string;
}

/**
 * Koa middleware answering every request it sees from the apps: `/{name}/…` from that app's
 * folder, `/{name}` redirected to `/{name}/`, anything else 404. Mounted after the API routes,
 * so it sees only what no route took.
 * @throws (to the problem middleware) RequestError 400 for a path refused by
 *   {@link parseRequestPath}, 405 for methods other than GET and HEAD; NotFoundError.
 */
export function extensionAppsMiddleware(
  apps: readonly ExtensionApp[],
  logger: Logger,
): Koa.Middleware {
  const folders = new Map(
    apps.map((app) => [
      app.name,
      new StaticFolder({ folder: app.folder, csp: app.csp ?? defaultAppCsp, logger }),
    ]),
  );
  return async (context) => {
    // The raw path (koa does not decode context.path): decoding is parseRequestPath's, once.
    const parsed = parseRequestPath(context.path);
    if (!parsed.ok) {
      throw new RequestError('bad-request', 400, `${parsed.reason} Nothing is served there.`);
    }
    const [name = '', ...rest] = parsed.segments;
    const folder = folders.get(name);
    if (!folder) throw new NotFoundError(`No app or route ${context.method} ${context.path}.`);
    if (rest.length > 0) {
      await folder.serve(context, `/${encodeURIComponent(name)}`, rest);
      return;
    }
    if (context.method !== 'GET' && context.method !== 'HEAD') {
      context.set('Allow', 'GET, HEAD');
      throw new RequestError('method-not-allowed', 405, `${context.method} is not allowed here.`);
    }
    // The app's relative links (app.js, style.css) resolve against its folder only with the '/'.
    const query = context.querystring ? `?${context.querystring}` : '';
    context.status = 308;
    context.set('Location', `/${encodeURIComponent(name)}/${query}`);
  };
}
