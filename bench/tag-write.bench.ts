/**
 * Tag writes through the API to a loopback Modbus TCP server in a child process
 * (test/helpers/modbus-write-bench-server.ts, which counts every write it receives).
 *
 * 1. Round trip: one client writes a uint32 tag, one write at a time, through
 *    `POST /api/v2/Tags/Write` (koa, token check, TagWrite, TagWriter, Modbus driver, FC 16, the
 *    acknowledgement, the answer), against a bare modbus-serial client sending the same FC 16
 *    writes. The rate of a sample is 1 / its median round trip, so the ratio compares p50s; p50
 *    and p99 of both are printed. Budget: p50 under 5 ms (at least 200 per second).
 * 2. Sustained: 10 clients, each writing its own tag 100 times a second (1,000 writes/s in all)
 *    for `TAGD_BENCH_WRITE_SECONDS` (default 10) seconds, each write a new value; the bare side
 *    is 10 modbus-serial clients on the same schedule. Afterwards the server's count must show no
 *    lost write (a Good result whose value never arrived) and no duplicated one (a value received
 *    twice); the bench fails otherwise. The rate is the writes per second achieved.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { ModbusDriver } from '../drivers/modbus/modbus-driver.js';
import { modbusDriverSchema } from '../drivers/modbus/schema.js';
import { createApp } from '../src/api/app.js';
import { AccountService } from '../src/auth/account-service.js';
import { hashPassword } from '../src/auth/password.js';
import { SignInLimiter } from '../src/auth/sign-in-limiter.js';
import { defaultLifetimes, TokenService } from '../src/auth/token-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { systemClock } from '../src/clock.js';
import { SecretBox } from '../src/profile/secret-box.js';
import { TagStore } from '../src/tags/tag-store.js';
import { TagWriter } from '../src/tags/tag-writer.js';
import { type CaseResult, caseResult, type MeasuredCase, median, sideResult } from './harness.js';

const clients = 10;
const perClientPerSecond = 100;
const seconds = Number(process.env.TAGD_BENCH_WRITE_SECONDS ?? 10);
const roundTripSamples = 5;
const writesPerSample = 400;
const password = 'bench password 42';

function log(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

/** The write server in a child process, with its `stats` query. */
interface WriteServer {
  port: number;
  stats(): Promise<{
    received: number;
    duplicates: number;
    last: Record<string, number>;
    distinct: Record<string, number>;
  }>;
  stop(): Promise<void>;
}

async function startWriteServer(): Promise<WriteServer> {
  const script = fileURLToPath(
    new URL('../test/helpers/modbus-write-bench-server.ts', import.meta.url),
  );
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) =>
    lines.shift()?.(line),
  );
  const next = () => new Promise<string>((resolve) => lines.push(resolve));
  const port = (JSON.parse(await next()) as { port: number }).port;
  return {
    port,
    async stats() {
      const answer = next();
      child.stdin?.write('stats\n');
      return JSON.parse(await answer);
    },
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The API with a Modbus driver writing to `port`; the tags are `Bench/C<i>` (uint32). */
async function startGateway(port: number) {
  const stateDir = await mkdtemp(join(tmpdir(), 'tagd-bench-write-'));
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
    username: 'operator',
    kind: 'user',
    roles: ['Operators'],
    passwordHash: await hashPassword(password),
  });
  const signedIn = await accounts.signIn('operator', password, '127.0.0.1');
  const store = new TagStore({ clock: systemClock });
  // The budget under test is the gateway's, not the per-account limit (20/s by default).
  const writer = new TagWriter({ store, audit: silent, logger: silent, now, writesPerSecond: 1e5 });
  const driver = new ModbusDriver(
    modbusDriverSchema.parse({
      type: 'modbus',
      name: 'Bench',
      allowWrites: true,
      transport: { kind: 'tcp', host: '127.0.0.1', port },
      pollIntervalMs: 60_000,
      tags: Array.from({ length: clients }, (_, i) => ({
        name: `C${i}`,
        table: 'holdingRegister',
        address: 2 * i,
        type: 'uint32',
        writable: true,
      })),
    }),
    { store, clock: systemClock, logger: silent, stateDir },
  );
  await driver.start();
  const deadline = Date.now() + 10_000;
  while (driver.status().state !== 'Running') {
    if (Date.now() > deadline) throw new Error('the bench driver did not connect');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  writer.register(driver);
  const app = createApp({
    store,
    logger: silent,
    version: 'bench',
    accounts,
    audit: silent,
    writer,
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiPort = (server.address() as AddressInfo).port;
  // node:http with keep-alive: a lighter client than fetch, since the clients share the
  // gateway's process and its CPU.
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const post = (body: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const outgoing = request(
        {
          host: '127.0.0.1',
          port: apiPort,
          path: '/api/v2/Tags/Write',
          method: 'POST',
          agent,
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
            Authorization: `Bearer ${signedIn.token}`,
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => {
            text += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  return {
    async write(client: number, value: number): Promise<string> {
      const response = await post(
        JSON.stringify({ writes: [{ fullTagId: `Bench/C${client}`, value }] }),
      );
      if (response.status !== 200) return String(response.status);
      const body = JSON.parse(response.text) as { results?: { status: string }[] };
      return body.results?.[0]?.status ?? 'none';
    },
    async stop() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await driver.stop();
      await users.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

type ModbusClient = import('modbus-serial/ModbusRTU.js').ModbusRTU;

async function bareClient(port: number): Promise<ModbusClient> {
  const ModbusRTU = (await import('modbus-serial')).default.default;
  const client = new ModbusRTU();
  await client.connectTCP('127.0.0.1', { port });
  client.setID(1);
  client.setTimeout(1000);
  return client;
}

const words = (value: number) => [value >>> 16, value & 0xffff];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function latencies(send: (value: number) => Promise<unknown>, first: number) {
  const times: number[] = [];
  for (let i = 0; i < writesPerSample; i++) {
    const start = performance.now();
    await send(first + i);
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

function roundTripCase(): MeasuredCase {
  const info = {
    name: 'tag write: API round trip to a loopback Modbus server (1 / p50)',
    unit: 'writes',
    budget: { minRatePerSecond: 200, description: 'issue 12: p50 round trip under 5 ms' },
  };
  return {
    kind: 'measured',
    ...info,
    async measure(): Promise<CaseResult> {
      const server = await startWriteServer();
      const gateway = await startGateway(server.port);
      const bare = await bareClient(server.port);
      const rates: [number[], number[]] = [[], []];
      const all: [number[], number[]] = [[], []];
      try {
        let value = 1;
        // Warm-up: JIT, connections.
        await latencies((v) => gateway.write(0, v), value);
        value += writesPerSample;
        for (let sample = 0; sample < roundTripSamples; sample++) {
          const baseline = await latencies(
            (v) => bare.writeRegisters(2 * clients, words(v)),
            value,
          );
          value += writesPerSample;
          const subject = await latencies(async (v) => {
            const status = await gateway.write(0, v);
            if (status !== 'Good') throw new Error(`a bench write answered ${status}`);
          }, value);
          value += writesPerSample;
          rates[0].push(1000 / median(baseline));
          rates[1].push(1000 / median(subject));
          all[0].push(...baseline);
          all[1].push(...subject);
          log(
            `sample ${sample + 1}: bare FC 16 p50 ${median(baseline).toFixed(2)} ms, ` +
              `API p50 ${median(subject).toFixed(2)} ms p99 ${percentile(subject, 99).toFixed(2)} ms`,
          );
        }
      } finally {
        await new Promise<void>((resolve) => bare.close(() => resolve()));
        await gateway.stop();
        await server.stop();
      }
      for (const [index, name] of ['bare modbus-serial FC 16', 'tagd API write'].entries()) {
        const sorted = (all[index] as number[]).sort((a, b) => a - b);
        log(
          `${name}: p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms over ${sorted.length} writes`,
        );
      }
      return caseResult(
        info,
        sideResult('bare modbus-serial client, FC 16', writesPerSample, rates[0]),
        sideResult('tagd API: POST Tags/Write → Modbus FC 16', writesPerSample, rates[1]),
      );
    },
  };
}

/**
 * Runs `clients` loops, each sending `perClientPerSecond` writes a second on a fixed schedule
 * (catching up when late) for `seconds`; returns the writes per second achieved and the count
 * of results per status.
 */
async function sustained(
  send: (client: number, value: number) => Promise<string>,
): Promise<{ rate: number; statuses: Record<string, number>; good: number[] }> {
  const statuses: Record<string, number> = {};
  const good = new Array(clients).fill(0) as number[];
  const total = perClientPerSecond * seconds;
  const start = performance.now();
  const cpu = process.cpuUsage();
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let k = 1; k <= total; k++) {
        const due = start + (k * 1000) / perClientPerSecond;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const sent = performance.now();
        const status = await send(client, k);
        times.push(performance.now() - sent);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 'Good') good[client] = (good[client] as number) + 1;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  log(
    `round trips: p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms, max ${percentile(times, 100).toFixed(1)} ms`,
  );
  log(
    `CPU of this process (clients and gateway): ${(((used.user + used.system) / 1e6 / elapsed) * 100).toFixed(0)} % of one core`,
  );
  return { rate: (clients * total) / elapsed, statuses, good };
}

function sustainedCase(): MeasuredCase {
  const info = {
    name: `tag write: ${clients} clients × ${perClientPerSecond}/s for ${seconds} s, none lost or duplicated`,
    unit: 'writes',
    budget: {
      minRatePerSecond: 990,
      description: 'issue 12: 1,000 writes/s sustained from 10 clients, none lost or duplicated',
    },
  };
  return {
    kind: 'measured',
    ...info,
    async measure(): Promise<CaseResult> {
      const rates: [number[], number[]] = [[], []];
      // Each side on a server of its own, so the counts are its own.
      for (const side of [0, 1] as const) {
        const server = await startWriteServer();
        try {
          let result: Awaited<ReturnType<typeof sustained>>;
          if (side === 0) {
            const bare = await Promise.all(
              Array.from({ length: clients }, () => bareClient(server.port)),
            );
            result = await sustained(async (client, value) => {
              await (bare[client] as ModbusClient).writeRegisters(2 * client, words(value));
              return 'Good';
            });
            for (const client of bare)
              await new Promise<void>((resolve) => client.close(() => resolve()));
          } else {
            const gateway = await startGateway(server.port);
            try {
              result = await sustained((client, value) => gateway.write(client, value));
            } finally {
              await gateway.stop();
            }
          }
          const stats = await server.stats();
          const lost = result.good.reduce(
            (sum, count, client) =>
              sum + Math.max(0, count - (stats.distinct[String(2 * client)] ?? 0)),
            0,
          );
          log(
            `${side === 0 ? 'bare modbus-serial' : 'tagd API'}: ${result.rate.toFixed(0)} writes/s, ` +
              `results ${JSON.stringify(result.statuses)}, server received ${stats.received}, ` +
              `lost ${lost}, duplicated ${stats.duplicates}`,
          );
          if (
            lost > 0 ||
            stats.duplicates > 0 ||
            stats.received !== clients * perClientPerSecond * seconds
          )
            throw new Error(
              `writes lost (${lost}) or duplicated (${stats.duplicates}), or a count differs (${stats.received})`,
            );
          rates[side].push(result.rate);
        } finally {
          await server.stop();
        }
      }
      return caseResult(
        info,
        sideResult(
          `${clients} bare modbus-serial clients`,
          clients * perClientPerSecond * seconds,
          rates[0],
        ),
        sideResult(
          `${clients} API clients, one write per request`,
          clients * perClientPerSecond * seconds,
          rates[1],
        ),
      );
    },
  };
}

/** The cases of this file. Servers start only when a case runs. */
export const cases: MeasuredCase[] = [roundTripCase(), sustainedCase()];
