/**
 * The assistant's budgets (issue 24):
 *
 * - `assistant: MCP tools/call readSamples p50`: the round trip of an MCP `tools/call` of
 *   readSamples (one tag) by the real SDK client over loopback HTTP to the real API (token
 *   check per request, the session's transport and server, the registry's checks, audit line,
 *   bounds): median < 5 ms. Baseline: the round trip of `GET /api/v2/Tags/Sample` from the same
 *   process, for scale.
 * - `assistant: tool handler overhead over Tags/Sample`: the same request (`GET
 *   /api/v2/Tags/Sample/{path}`, same token, same load from autocannon) answered by the REST
 *   route's handler (baseline) and by a copy of the route whose handler calls the registry's
 *   readSamples tool (subject: permission and token checks, input validation, the concurrency
 *   count, the audit line written, output bounding): at least 1/1.1 of the baseline's rate, i.e.
 *   the tool handler costs less than 10 % over the route.
 *
 * The audit log of both servers is a real pino logger at info level writing to /dev/null, so
 * the audit line each tool call writes is paid for as in the daemon.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import type { ApiDeps } from '../src/api/app.js';
import { apiRoutes, createApp } from '../src/api/app.js';
import { defineRoute, type RouteDefinition } from '../src/api/route.js';
import { AssistantToolRegistry } from '../src/assistant/tool-registry.js';
import { AccountService } from '../src/auth/account-service.js';
import { hashPassword } from '../src/auth/password.js';
import { SignInLimiter } from '../src/auth/sign-in-limiter.js';
import { defaultLifetimes, TokenService } from '../src/auth/token-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { SecretBox } from '../src/profile/secret-box.js';
import type { Sample } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import { type CaseResult, caseResult, type MeasuredCase, median, sideResult } from './harness.js';
import type { LoadCase, LoadSide } from './load-harness.js';

const fullTagId = 'Demo/Line1/Temperature';
const samplePath = `/api/v2/Tags/Sample/${fullTagId}`;
const password = 'bench password 42';
const sample: Sample = {
  fullTagId,
  utcTimestamp: '2026-01-01T08:00:00.000Z',
  quality: 'Good',
  value: 61.23456789,
  metadata: { unit: '°C', description: 'Oven temperature' },
};

interface BenchApi {
  url: string;
  token: string;
  stop(): Promise<void>;
}

/** The accounts both servers of a case check tokens against, so one token serves both. */
interface BenchAccounts {
  accounts: AccountService;
  token: string;
  /** Ends with the last server using it. */
  release(): Promise<void>;
}

let sharedAccounts: Promise<BenchAccounts> | undefined;
let accountUsers = 0;

function benchAccounts(): Promise<BenchAccounts> {
  accountUsers++;
  sharedAccounts ??= (async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'tagd-bench-assistant-'));
    const silent = pino({ level: 'silent' });
    const now = Date.now;
    const users = new UserStore({ stateDir, now });
    await users.start();
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
    return {
      accounts,
      token: signedIn.token,
      async release() {
        if (--accountUsers > 0) return;
        sharedAccounts = undefined;
        await users.stop();
        await rm(stateDir, { recursive: true, force: true });
      },
    };
  })();
  return sharedAccounts;
}

/**
 * The real API on loopback with a real account service, one Viewer signed in, the sample in the
 * store; with `toolRoute`, Tags/Sample answers through the registry's readSamples tool.
 */
async function startBenchApi(toolRoute: boolean): Promise<BenchApi> {
  const shared = await benchAccounts();
  const silent = pino({ level: 'silent' });
  const audit = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
  const store = new TagStore();
  store.define([{ fullTagId, ...(sample.metadata ? { metadata: sample.metadata } : {}) }]);
  store.write([sample]);
  const deps: ApiDeps = {
    store,
    logger: silent,
    version: 'bench',
    accounts: shared.accounts,
    audit,
  };
  const registry = new AssistantToolRegistry(deps);
  deps.assistantTools = registry;
  let routes: RouteDefinition[] = apiRoutes(deps);
  if (toolRoute) {
    routes = routes.map((route) =>
      route.operationId !== 'getTagSample'
        ? route
        : defineRoute({
            ...(route as RouteDefinition<{ fullTagPath: string }>),
            handle: async ({ params, principal, context }) => {
              if (!principal) throw new Error('unreachable');
              const outcome = await registry.call(
                'readSamples',
                { fullTagIds: [params.fullTagPath] },
                { principal, via: 'mcp' },
              );
              if (!outcome.ok) throw new Error(outcome.error.message);
              context.type = 'application/json';
              return outcome.json;
            },
          }),
    );
  }
  const server: Server = createServer(createApp(deps, { routes }).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token: shared.token,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await shared.release();
    },
  };
}

/** Round trips per timed sample, and samples, of the latency case. */
const roundTrips = 400;
const latencySamples = 7;

function latencyCase(): MeasuredCase {
  return {
    kind: 'measured',
    name: 'assistant: MCP tools/call readSamples p50',
    unit: 'ms',
    quantity: 'amount',
    budget: { maxAmount: 5, description: 'issue 24: MCP tools/call of a sample read p50 < 5 ms' },
    async measure(): Promise<CaseResult> {
      const api = await startBenchApi(false);
      const headers = { Authorization: `Bearer ${api.token}` };
      const client = new Client({ name: 'tagd-bench', version: '1.0.0' });
      try {
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${api.url}/api/v2/Mcp`), {
            requestInit: { headers },
          }),
        );
        const mcpCall = async () => {
          const result = (await client.callTool({
            name: 'readSamples',
            arguments: { fullTagIds: [fullTagId] },
          })) as { isError?: boolean; content: { text: string }[] };
          if (result.isError || !result.content[0]?.text.includes('61.23456789')) {
            throw new Error(`unexpected answer: ${JSON.stringify(result)}`);
          }
        };
        const restCall = async () => {
          const response = await fetch(`${api.url}${samplePath}`, { headers });
          if (response.status !== 200) throw new Error(`REST answered ${response.status}`);
          await response.text();
        };
        // Median round trip of each sample of `roundTrips` calls, in ms.
        const medianOf = async (call: () => Promise<void>) => {
          const times: number[] = [];
          for (let i = 0; i < roundTrips; i++) {
            const began = performance.now();
            await call();
            times.push(performance.now() - began);
          }
          return median(times);
        };
        // Warm-up of both sides, then samples taken alternately.
        await medianOf(mcpCall);
        await medianOf(restCall);
        const mcp: number[] = [];
        const rest: number[] = [];
        for (let sample = 0; sample < latencySamples; sample++) {
          rest.push(await medianOf(restCall));
          mcp.push(await medianOf(mcpCall));
        }
        return caseResult(
          this,
          sideResult('REST GET Tags/Sample round trip p50', roundTrips, rest),
          sideResult('MCP tools/call readSamples round trip p50 (SDK client)', roundTrips, mcp),
        );
      } finally {
        await client.close();
        await api.stop();
      }
    },
  };
}

/** A side of the overhead case: the bench API with or without the tool route. */
function benchSide(toolRoute: boolean, token: { value: string }): LoadSide {
  let api: BenchApi | undefined;
  return {
    name: toolRoute
      ? 'Tags/Sample answered by the readSamples tool handler (checks, audit, bounds)'
      : 'Tags/Sample answered by its REST handler',
    async start() {
      api = await startBenchApi(toolRoute);
      token.value = api.token;
      return api.url;
    },
    async stop() {
      await api?.stop();
    },
  };
}

function overheadCase(): LoadCase {
  const token = { value: '' };
  // Filled once the servers run: autocannon reads the object when a run starts.
  const headers: Record<string, string> = {};
  return {
    kind: 'load',
    name: 'assistant: tool handler overhead over Tags/Sample',
    unit: 'requests',
    path: samplePath,
    headers,
    baseline: benchSide(false, token),
    subject: benchSide(true, token),
    budget: {
      minRatio: 1 / 1.1,
      description: 'issue 24: tool handler overhead < 10 % over the same REST route',
    },
    async verify(baselineUrl, subjectUrl) {
      headers.Authorization = `Bearer ${token.value}`;
      const [baseline, subject] = await Promise.all(
        [baselineUrl, subjectUrl].map((url) => fetch(url, { headers })),
      );
      if (baseline?.status !== 200 || subject?.status !== 200) {
        throw new Error(`status ${baseline?.status} / ${subject?.status}`);
      }
      const body = (await subject.json()) as { samples: Sample[] };
      if (body.samples[0]?.value !== sample.value) throw new Error('the tool answered no sample');
      await baseline.text();
    },
  };
}

/** The cases of this file. Servers start only when a case runs. */
export const cases: (MeasuredCase | LoadCase)[] = [latencyCase(), overheadCase()];
