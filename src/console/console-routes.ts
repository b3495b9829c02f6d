/**
 * Serves the browser console from the main listener: the page at `/` (revalidated on every
 * load, so an upgrade shows at once) and its content-hashed assets under `/console/` (cached
 * for a year and immutable: a new build has new names). The console talks to the public
 * `/api/v2` only, like any custom application would; these routes are public because the page
 * holds no data: signing in happens through the API.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import type { ApiDeps } from '../api/api-deps.js';
import { defineRoute, type RouteDefinition } from '../api/route.js';
import { NotFoundError } from '../errors.js';
import type { ConsoleFile } from './console-bundle.js';
import { assetPathPrefix } from './console-manifest.js';

/** Path of the console page. */
export const consolePagePath = '/';

/** Cache-Control of hashed assets: their names change with their content. */
export const immutableCacheControl = 'public, max-age=31536000, immutable';

const assetParams = z.object({
  file: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/)
    .describe('Hashed file name, e.g. `main-3XK2J7QH.js`.'),
});

/** The console's page and asset routes. */
export function consoleRoutes(deps: ApiDeps): RouteDefinition[] {
  const notBuilt = () =>
    new NotFoundError('The console is not built into this installation: run `npm run build`.');
  return [
    defineRoute({
      method: 'get',
      path: consolePagePath,
      operationId: 'getConsole',
      tag: 'Console',
      summary: 'The web console',
      description:
        'The browser console (Tags, Drivers, Publishers, Collections, Users & Groups). It signs in with a cookie session through `/api/v2/Users/Authenticate?useCookies=true` and uses only the public API; what a page shows depends on the permissions of the account. 404 when the installation was not built with its console.',
      access: { kind: 'public' },
      responses: { 200: { description: 'The console page.', mediaType: 'text/html' } },
      problems: [404],
      handle: ({ context }) => {
        if (!deps.console) throw notBuilt();
        // Not cached: the page names the current build's assets.
        return send(context, deps.console.index, 'no-store');
      },
    }),
    defineRoute({
      method: 'get',
      path: `${assetPathPrefix}{file}`,
      operationId: 'getConsoleAsset',
      tag: 'Console',
      summary: 'A script or stylesheet of the console',
      description:
        'Content-hashed files of the console build, cached immutable for a year; gzipped when the client accepts it.',
      access: { kind: 'public' },
      params: assetParams,
      responses: {
        200: { description: 'The file (JavaScript or CSS).', mediaType: 'text/javascript' },
      },
      problems: [400, 404],
      handle: ({ context, params }) => {
        if (!deps.console) throw notBuilt();
        const file = deps.console.assets.get(params.file);
        if (!file) throw new NotFoundError(`The console has no file '${params.file}'.`);
        return send(context, file, immutableCacheControl);
      },
    }),
  ];
}

function send(context: Context, file: ConsoleFile, cacheControl: string): Buffer {
  context.status = 200;
  context.type = file.type;
  context.set('Cache-Control', cacheControl);
  context.set('Vary', 'Accept-Encoding');
  if (file.gzip && context.acceptsEncodings('gzip', 'identity') === 'gzip') {
    context.set('Content-Encoding', 'gzip');
    return file.gzip;
  }
  return file.body;
}
