/**
 * The servers of the API benchmarks (bench/api.bench.ts, bench/api-cpu.bench.ts,
 * bench/assistant.bench.ts): a bare node:http server answering the sample's JSON with the API's
 * headers, and the real API with its real account service, its Tags/Sample route answered by the
 * REST handler or by the assistant's readSamples tool. The bare server and the REST route answer
 * the same bytes and headers (api.bench.ts verifies it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { type ApiDeps, apiRoutes, createApp } from '../src/api/app.js';
import { defineRoute, type RouteDefinition } from '../src/api/route.js';
import { AssistantToolRegistry } from '../src/assistant/tool-registry.js';
import { AccountService } from '../src/auth/account-service.js';
import { hashPassword } from '../src/auth/password.js';
import { SignInLimiter } from '../src/auth/sign-in-limiter.js';
import { defaultLifetimes, TokenService } from '../src/auth/token-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { createLogger } from '../src/logger.js';
import { TagdMetrics } from '../src/metrics/tagd-metrics.js';
import { SecretBox } from '../src/profile/secret-box.js';
import { RecentEvents } from '../src/recent-events.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import type { LoadSide } from './load-harness.js';

/** The tag read, as in the demo profile. */
export const fullTagId = 'Demo/Line1/Temperature';
const password = 'bench password 42';

/** The latest sample of the demo temperature, as the simulator writes it. */
const sample: Sample = {
  fullTagId,
  utcTimestamp: '2026-01-01T08:00:00.000Z',
  quality: 'Good',
  value: 61.23456789,
  metadata: { unit: '°C', description: 'Oven temperature' },
};

/** The headers the API sets on every answer (src/api/app.ts), so both answers weigh the same. */
const securityHeaders = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A bare node:http server: a Map lookup and JSON.stringify per request. */
export function bareServer(): LoadSide {
  const latest = new Map<string, Sample>([[fullTagId, sample]]);
  const prefix = '/api/v2/Tags/Sample/';
  let server: Server | undefined;
  return {
    name: 'bare node:http, Map lookup + JSON.stringify',
    async start() {
      server = createServer((request: IncomingMessage, response: ServerResponse) => {
        const found = latest.get((request.url ?? '').slice(prefix.length));
        const body = JSON.stringify(found ?? null);
        // Content-Length like koa: a chunked answer would cost the bare server more bytes.
        response.writeHead(found ? 200 : 404, {
          ...securityHeaders,
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
        });
        response.end(body);
      });
      return listen(server);
    },
    async stop() {
      if (server) await close(server);
    },
  };
}

/**
 * What answers `GET /api/v2/Tags/Sample/{path}` in {@link apiServer}: `route`, the REST route's
 * own handler; `tool`, a copy of the route whose handler calls the assistant registry's
 * readSamples tool (permission and token checks, input validation, the in-flight count, the
 * audit, output bounding) and answers its JSON, as one MCP session calling in a loop (its
 * repeated reads audited in a summary line a second); `tool-line-each`, the same with each call
 * from a session of its own, so each writes an audit line of its own; `tool-unaudited`, the same
 * with the audit logger's level above the lines'.
 */
export type SampleHandler = 'route' | 'tool' | 'tool-line-each' | 'tool-unaudited';

/**
 * The routes of `deps` with Tags/Sample answered by `registry`'s readSamples tool, from one MCP
 * session, or from a new one each call when `sessionEach`.
 */
function toolSampleRoutes(
  deps: ApiDeps,
  registry: AssistantToolRegistry,
  sessionEach: boolean,
): RouteDefinition[] {
  let sessions = 0;
  return apiRoutes(deps).map((route) =>
    route.operationId !== 'getTagSample'
      ? route
      : defineRoute({
          ...(route as RouteDefinition<{ fullTagPath: string }>),
          handle: async ({ params, principal, context }) => {
            if (!principal) throw new Error('unreachable');
            const outcome = await registry.call(
              'readSamples',
              { fullTagIds: [params.fullTagPath] },
              {
                principal,
                via: 'mcp',
                conversationId: sessionEach ? `session-${++sessions}` : 'session',
              },
            );
            if (!outcome.ok) throw new Error(outcome.error.message);
            // The JSON as the router sends a serialized object: the header set directly, not
            // through koa's type lookup, so both sides pay the same for it.
            context.res.setHeader('Content-Type', 'application/json; charset=utf-8');
            return outcome.json;
          },
        }),
  );
}

/**
 * The real API with its real account service, request metrics, assistant tool registry and
 * logger, as the daemon builds them; `token` is filled in by start(). The log (the audit log
 * included) is the daemon's logger at info level writing to /dev/null, so an audit line (each
 * tool call writes one) is paid for as in the daemon.
 *
 * @param sampleHandler - what answers Tags/Sample; default `route`.
 */
export function apiServer(
  token: { value: string },
  sampleHandler: SampleHandler = 'route',
): LoadSide {
  let server: Server | undefined;
  let cleanup: () => Promise<void> = async () => {};
  return {
    name:
      sampleHandler === 'route'
        ? 'tagd API (koa, token check, TagView, TagStore)'
        : sampleHandler === 'tool'
          ? 'tagd API, Tags/Sample answered by the readSamples tool (checks, audit, bounds)'
          : 'tagd API, Tags/Sample answered by the readSamples tool, its audit line not written',
    async start() {
      const stateDir = await mkdtemp(join(tmpdir(), 'tagd-bench-'));
      const silent = pino({ level: 'silent' });
      const now = Date.now;
      const users = new UserStore({ stateDir, now });
      await users.start();
      cleanup = async () => {
        await users.stop();
        await rm(stateDir, { recursive: true, force: true });
      };
      // An hour of access token: a run lasts about a minute.
      const tokens = await TokenService.open(stateDir, { ...defaultLifetimes, access: 3600 }, now);
      const accounts = new AccountService({
        users,
        tokens,
        limiter: new SignInLimiter(now),
        secretBox: await SecretBox.open(stateDir),
        audit: silent,
        now,
      });
      await users.add({
        username: 'viewer',
        kind: 'user',
        roles: ['Viewers'],
        passwordHash: await hashPassword(password),
      });
      const signedIn = await accounts.signIn('viewer', password, '127.0.0.1');
      if (signedIn.token === undefined) throw new Error('the bench account got no token');
      token.value = signedIn.token;
      const store = new TagStore();
      store.define([{ fullTagId, ...(sample.metadata ? { metadata: sample.metadata } : {}) }]);
      store.write([sample]);
      // The daemon's logger as cli.ts and daemon.ts build it (JSON lines written synchronously,
      // secrets masked, info lines and above teed into the console's event view), at info, into
      // /dev/null: every audit line is paid for as in the daemon.
      const daemonLogger = createLogger({
        level: 'info',
        destination: pino.destination({ dest: '/dev/null', sync: true }),
        recentEvents: new RecentEvents(),
      });
      const deps: ApiDeps = {
        store,
        logger: daemonLogger.child({ component: 'api' }),
        version: 'bench',
        accounts,
        // `tool-unaudited` isolates the registry's own cost: the audit line is made below the
        // level, so pino returns at once (what an audit line costs is the difference).
        audit: daemonLogger.child(
          { component: 'audit' },
          sampleHandler === 'tool-unaudited' ? { level: 'warn' } : {},
        ),
        // The request metrics count and time every answer in the daemon too.
        metrics: new TagdMetrics({ version: 'bench', now }).api(() => false),
      };
      const registry = new AssistantToolRegistry(deps);
      deps.assistantTools = registry;
      const app = createApp(
        deps,
        sampleHandler === 'route'
          ? {}
          : { routes: toolSampleRoutes(deps, registry, sampleHandler === 'tool-line-each') },
      );
      server = createServer(app.callback());
      return listen(server);
    },
    async stop() {
      if (server) await close(server);
      await cleanup();
    },
  };
}
