/**
 * The two servers of the API benchmarks (bench/api.bench.ts, bench/api-cpu.bench.ts): a bare
 * node:http server answering the sample's JSON with the API's headers, and the real API with its
 * real account service. Both answer the same bytes and headers (api.bench.ts verifies it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/api/app.js';
import { AccountService } from '../src/auth/account-service.js';
import { hashPassword } from '../src/auth/password.js';
import { SignInLimiter } from '../src/auth/sign-in-limiter.js';
import { defaultLifetimes, TokenService } from '../src/auth/token-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { TagdMetrics } from '../src/metrics/tagd-metrics.js';
import { SecretBox } from '../src/profile/secret-box.js';
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
 * The real API with its real account service and request metrics, as the daemon builds it;
 * `token` is filled in by start().
 */
export function apiServer(token: { value: string }): LoadSide {
  let server: Server | undefined;
  let cleanup: () => Promise<void> = async () => {};
  return {
    name: 'tagd API (koa, token check, TagView, TagStore)',
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
      // The request metrics count and time every answer in the daemon too.
      const metrics = new TagdMetrics({ version: 'bench', now }).api(() => false);
      const app = createApp({
        store,
        logger: silent,
        version: 'bench',
        accounts,
        audit: silent,
        metrics,
      });
      server = createServer(app.callback());
      return listen(server);
    },
    async stop() {
      if (server) await close(server);
      await cleanup();
    },
  };
}
