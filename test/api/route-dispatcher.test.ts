import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import test from 'ava';
import Koa from 'koa';
import { routeDispatcher } from '../../src/api/route-dispatcher.js';
import { RouteIndex } from '../../src/api/route-index.js';

/**
 * The dispatcher must run exactly what `router.routes()` runs: the same route, the same
 * parameters, and the same 404/405/501/OPTIONS answers through `allowedMethods()`. Both apps
 * below serve one router; every request is sent to both and the answers compared.
 */
function exampleRouter(): Router {
  const router = new Router();
  const answer = (id: string) => (context: Koa.Context) => {
    context.body = { route: id, params: context.params };
  };
  router.get('/api/v2/Tags', answer('tags'));
  router.get('/api/v2/Tags/Sample/{*fullTagPath}', answer('sample'));
  router.post('/api/v2/Tags/Write', answer('write'));
  router.get('/api/v2/Tags/Stream/', answer('stream-with-slash'));
  router.get('/api/v2/Tag{s}/Optional', answer('optional-group'));
  router.get('/api/v2/Users/Current', answer('current'));
  // Passes fixed names on, as a route that does not claim them does (src/api/router.ts).
  router.get('/api/v2/Users/:name', (context, next) => {
    if (context.params.name === 'Refresh') return next();
    context.body = { route: 'user', params: context.params };
  });
  router.put('/api/v2/Users/:name', answer('user-put'));
  router.delete('/api/v2/Users/:name', answer('user-delete'));
  router.get('/api/v2/Users/Refresh', answer('refresh-after-pass'));
  router.get('/api/v2/Users/:name/Token', answer('token'));
  router.get('/', answer('root'));
  router.get('/swagger', answer('swagger'));
  router.get('/assets/:file', answer('asset'));
  router.get('/:area/Overview', answer('overview'));
  router.get('/healthz', answer('health'));
  return router;
}

async function serve(app: Koa): Promise<{ server: Server; url: string }> {
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function appWith(dispatch: (router: Router) => Koa.Middleware): Koa {
  const router = exampleRouter();
  const app = new Koa();
  app.silent = true;
  app.use(dispatch(router));
  app.use(router.allowedMethods());
  // What reaches the end of the app: the extensions server's fallback sees `matched`.
  app.use((context) => {
    const matched = (context as { matched?: { path: unknown }[] }).matched ?? [];
    if (context.status === 404) context.set('X-Matched', matched.map((l) => l.path).join(' '));
  });
  return app;
}

const paths = [
  '/api/v2/Tags',
  '/api/v2/Tags/',
  '/API/V2/tags',
  '/api/v2/Tagsx',
  '/api/v2/Tags/Sample',
  '/api/v2/Tags/Sample/Demo/Line1/Temperature',
  '/api/v2/tags/SAMPLE/Demo/Line1/Temperature/',
  '/api/v2/Tags/Sample/A%2FB/c%20d',
  '/api/v2/Tags/Sample/bad%E0%A4%Aencoding',
  '/api/v2/Tags/Write',
  '/api/v2/Tags/Stream',
  '/api/v2/Tags/Stream/',
  '/api/v2/Tag/Optional',
  '/api/v2/Tags/Optional',
  '/api/v2//Tags',
  '//api/v2/Tags',
  '/api/v2/Users/Current',
  '/api/v2/Users/bob',
  '/api/v2/Users/Refresh',
  '/api/v2/users/bob/token/',
  '/api/v2/Users/b%C3%B6b/Token',
  '/',
  '/swagger',
  '/swagger/',
  '/assets/app.js',
  '/assets/',
  '/Plant/Overview',
  '/api/Overview',
  '/healthz',
  '/nowhere',
  '/api',
  '/api/v2',
];
const methods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND'];

test('the dispatcher answers every request as router.routes() does', async (t) => {
  const reference = await serve(appWith((router) => router.routes() as Koa.Middleware));
  const subject = await serve(appWith(routeDispatcher));
  t.teardown(() => {
    reference.server.close();
    subject.server.close();
  });
  const answer = async (base: string, method: string, path: string) => {
    const response = await fetch(`${base}${path}`, { method });
    return {
      status: response.status,
      allow: response.headers.get('allow'),
      matched: response.headers.get('x-matched'),
      body: await response.text(),
    };
  };
  let routed = 0;
  for (const path of paths) {
    for (const method of methods) {
      const expected = await answer(reference.url, method, path);
      t.deepEqual(await answer(subject.url, method, path), expected, `${method} ${path}`);
      if (expected.status === 200 && expected.body.includes('"route"')) routed++;
    }
  }
  // The list reaches routes, not only 404s: a broken comparison could not pass by accident.
  t.true(routed >= 25, `${routed} requests reached a route`);
});

test('the index keys a route by its first three literal segments, or tests it always', (t) => {
  const router = exampleRouter();
  const index = new RouteIndex(router.stack);
  const names = (path: string) => index.candidates(path).map((layer) => String(layer.path));
  // Its bucket and the unbucketed routes, in registration order.
  t.deepEqual(names('/api/v2/TAGS/Sample/x'), [
    '/api/v2/Tags',
    '/api/v2/Tags/Sample/{*fullTagPath}',
    '/api/v2/Tags/Write',
    '/api/v2/Tags/Stream/',
    '/api/v2/Tag{s}/Optional',
    '/',
    '/swagger',
    '/assets/:file',
    '/:area/Overview',
    '/healthz',
  ]);
  // No bucket of its own: the unbucketed routes only.
  t.deepEqual(names('/healthz'), [
    '/api/v2/Tag{s}/Optional',
    '/',
    '/swagger',
    '/assets/:file',
    '/:area/Overview',
    '/healthz',
  ]);
});

test('a router the dispatcher cannot run as routes() would is refused at build', (t) => {
  const router = new Router();
  router.use((_context, next) => next());
  router.get('/x', (context) => {
    context.body = 'x';
  });
  t.throws(() => routeDispatcher(router), { message: /not a single-handler route/ });
  const twoHandlers = new Router();
  twoHandlers.get(
    '/x',
    (_context, next) => next(),
    (context) => {
      context.body = 'x';
    },
  );
  t.throws(() => routeDispatcher(twoHandlers), { message: /not a single-handler route/ });
});
