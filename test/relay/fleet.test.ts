/**
 * The fleet test of docs/relay.md ("Fleet test and budgets"): edge tagd processes (simulators
 * of counters at 1 Hz, one per Sparkplug device, their own SQLite history) publish Sparkplug B
 * with `primaryHostId` into one Mosquitto; one central tagd process is the Primary Host with
 * PostgreSQL history. Faults in turn: kill -9 of the broker and a restart on the same port,
 * SIGSTOP of the central tagd, then its restart as systemd stops a stuck service (SIGTERM and
 * SIGCONT at once, the backlog of the freeze unread: the host drains it before it leaves; its
 * STATE offline, the edges store, then forward as is_historical), kill -9 of an edge.
 * Afterwards every edge's own history is compared with the central history: no sample lost, no
 * two values of a tag at one timestamp, no tag Good on the central side after its edge died.
 *
 * Sized by environment for a bigger run (docs/relay.md): FLEET_EDGES (default 3), FLEET_TAGS
 * (tags per edge, default 100), FLEET_DEVICES (simulators, so DDATA per scan, per edge, default
 * 25: the backlog of the freeze is then ~750 messages, more than the host reads in the time its
 * stop takes to reach the driver), FLEET_STOP_MS (SIGSTOP of the central tagd, default 10,000),
 * FLEET_OUTAGE_MS (the central tagd's downtime at its restart, default 5,000).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import pg from 'pg';
import { storedSamplesOf } from '../../src/publishers/mqtt/stored-samples.js';
import { runTagdCli, seededStateDir } from '../helpers/cli-state.js';
import { freePort, startMosquitto } from '../helpers/mosquitto.js';
import {
  type PostgresServer,
  postgresSkipReason,
  startPostgresServer,
} from '../helpers/postgres-server.js';
import { startTagd, type TagdProcess } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const license = fileURLToPath(new URL('../../config/demo-license.json', import.meta.url));
const edges = Number(process.env.FLEET_EDGES ?? 3);
const tagsPerEdge = Number(process.env.FLEET_TAGS ?? 100);
const devicesPerEdge = Number(process.env.FLEET_DEVICES ?? 25);
const stopMs = Number(process.env.FLEET_STOP_MS ?? 10_000);
const outageMs = Number(process.env.FLEET_OUTAGE_MS ?? 5_000);
/** Safety net of every wait: the waits end on their event, this only stops a hung run. */
const waitBoundMs = 180_000;
/**
 * How soon a killed edge's tags must be Unavailable centrally. docs/relay.md states "about a
 * second" (the broker sees the socket close and publishes the Will); the room is for a 2-core
 * machine running other tests.
 */
const deathBoundMs = 15_000;
/** Longest tail of scans a killed edge may take with it (its publisher's queue), ms. */
const tailBoundMs = 15_000;
const group = 'Fleet';
const edgeName = (index: number) => `edge${index}`;
const tagName = (index: number) => `T${String(index).padStart(4, '0')}`;
const devices = Array.from({ length: devicesPerEdge }, (_, index) => `Sim${index}`);
/** A relayed tag of an edge's simulators, below the edge node on the central side. */
const simulatorTag = /^[^/]+\/[^/]+\/[^/]+\/Sim\d+\/T\d+$/;

let postgres: PostgresServer | undefined;
const skip = postgresSkipReason();
test.after.always(async () => {
  await postgres?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `check` returns a value other than undefined; polls every 200 ms. */
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + waitBoundMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${waitBoundMs} ms (${last})`);
    await sleep(200);
  }
}

/** The first stdout JSON line whose msg matches, or undefined. */
function loggedLine(process: TagdProcess, pattern: RegExp): Record<string, unknown> | undefined {
  for (const line of process.stdout().split('\n')) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as { msg?: string };
    if (pattern.test(parsed.msg ?? '')) return parsed;
  }
  return undefined;
}

/** Resolves with the first stdout JSON line after `from` characters whose msg matches. */
function logLine(process: TagdProcess, pattern: RegExp, from: number): Promise<unknown> {
  return until(`log line ${pattern}`, async () => {
    for (const line of process.stdout().slice(from).split('\n')) {
      if (!line.startsWith('{')) continue;
      const parsed = JSON.parse(line) as { msg?: string };
      if (pattern.test(parsed.msg ?? '')) return parsed;
    }
    if (process.child.exitCode !== null) throw new Error(`exited: ${process.stderr()}`);
    return undefined;
  });
}

interface Edge {
  name: string;
  stateDir: string;
  process: TagdProcess;
}

interface Central {
  url: string;
  token: string;
  stateDir: string;
  profileFile: string;
  process?: TagdProcess;
}

function edgeProfile(name: string, brokerUrl: string) {
  return {
    license: { file: license },
    // One simulator driver per Sparkplug device: each scan is one DDATA per device.
    drivers: devices.map((device, d) => ({
      type: 'simulator',
      name: device,
      scanIntervalMs: 1000,
      tags: Array.from({ length: tagsPerEdge }, (_, index) => index)
        .filter((index) => index % devicesPerEdge === d)
        .map((index) => ({
          name: tagName(index),
          kind: 'counter',
          start: index * 1_000_000,
          step: 1,
        })),
    })),
    collections: [{ name: 'All', members: devices.map((device) => `${device}/**`) }],
    history: {
      backend: 'sqlite',
      log: devices.map((device) => ({ source: `${device}/**`, mode: 'onChange' })),
    },
    publishers: {
      mqtt: [
        {
          name: 'to-central',
          brokerUrl,
          // One client id per edge: the default (`tagd-<host>-<publisher>`) is the same for
          // every edge on this one machine, and the broker would take each session over.
          clientId: `fleet-${name}`,
          collections: ['All'],
          format: 'sparkplugB',
          groupId: group,
          edgeNodeId: name,
          primaryHostId: 'central',
          loggingMode: 'Everything',
          updateIntervalMs: 200,
        },
      ],
    },
  };
}

async function startEdge(t: ExecutionContext, folder: string, name: string, brokerUrl: string) {
  const file = join(folder, `${name}.json`);
  await writeFile(file, JSON.stringify(edgeProfile(name, brokerUrl)));
  const stateDir = join(folder, `${name}-state`);
  const process = startTagd(['start', '--profile', file, '--listen', '127.0.0.1:0'], {
    env: { TAGD_STATE_DIR: stateDir },
  });
  t.teardown(async () => {
    process.child.kill('SIGKILL');
    if (globalThis.process.env.FLEET_DEBUG) {
      await writeFile(join(globalThis.process.env.FLEET_DEBUG, `${name}.log`), process.stdout());
    }
  });
  return { name, stateDir, process };
}

function startCentral(t: ExecutionContext, central: Central): TagdProcess {
  const port = new URL(central.url).port;
  const process = startTagd(
    ['start', '--profile', central.profileFile, '--listen', `127.0.0.1:${port}`],
    { env: { TAGD_STATE_DIR: central.stateDir } },
  );
  t.teardown(async () => {
    process.child.kill('SIGCONT');
    process.child.kill('SIGKILL');
    if (globalThis.process.env.FLEET_DEBUG) {
      await writeFile(
        join(globalThis.process.env.FLEET_DEBUG, `central-${process.child.pid}.log`),
        process.stdout(),
      );
    }
  });
  central.process = process;
  return process;
}

async function api<T>(central: Central, path: string): Promise<T> {
  const response = await fetch(`${central.url}${path}`, {
    headers: { Authorization: `Bearer ${central.token}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Every relayed tag of an edge on the central side, by browse pages. */
async function centralTags(central: Central, edge: string) {
  const tags: { fullTagId: string; quality: string; utcTimestamp: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await api<{ tags: typeof tags; nextCursor?: string }>(
      central,
      `/api/v2/Tags?pattern=site/${group}/${edge}/**&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    tags.push(...page.tags.filter((tag) => simulatorTag.test(tag.fullTagId)));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tags;
}

/** Every relayed tag of the edges Good (and, with `since`, read at or after it). */
const allGood = async (central: Central, names: string[], since = 0) => {
  for (const name of names) {
    const tags = await centralTags(central, name);
    const bad = tags.filter(
      (tag) => tag.quality !== 'Good' || Date.parse(tag.utcTimestamp) < since,
    );
    if (tags.length !== tagsPerEdge || bad.length > 0) {
      throw new Error(
        `${name}: ${tags.length} tags, ${bad.length} not Good: ${JSON.stringify(bad[0])}`,
      );
    }
  }
  return true;
};

const noneGood = async (central: Central, name: string) => {
  const tags = await centralTags(central, name);
  return tags.length === tagsPerEdge && tags.every((tag) => tag.quality !== 'Good')
    ? true
    : undefined;
};

/** The samples an edge's publisher still holds in its outbox, by `<path>@<epoch ms>`. */
function storedInOutbox(edge: Edge): Map<string, unknown> {
  const stored = new Map<string, unknown>();
  const file = join(edge.stateDir, 'outbox', 'mqtt-to-central.db');
  if (!existsSync(file)) return stored;
  const db = new Database(file, { readonly: true });
  const rows = db.prepare('SELECT topic, payload FROM messages').all() as {
    topic: string;
    payload: Buffer;
  }[];
  db.close();
  for (const row of rows) {
    for (const sample of storedSamplesOf(row.topic, row.payload) ?? [])
      stored.set(`${sample.fullTagId}@${sample.timestamp}`, sample.value);
  }
  return stored;
}

function signal(child: ChildProcess, name: NodeJS.Signals) {
  if (!child.kill(name)) throw new Error(`${name} not delivered`);
}

(skip ? test.skip : test)(
  'a fleet of edges relays to a central Primary Host through faults without losing or duplicating a sample',
  async (t) => {
    t.timeout(20 * 60_000);
    postgres = await startPostgresServer();
    const database = await postgres.createDatabase('fleet');
    // The central host's queue must hold what the edges send while it is frozen (docs/relay.md,
    // "Broker queue"): one DDATA per device and scan, and the births and catch-up around it.
    const broker = await startMosquitto(t, {
      maxQueuedMessages: edges * devicesPerEdge * Math.ceil(stopMs / 1000) * 2 + 1000,
    });
    t.teardown(async () => {
      const debug = globalThis.process.env.FLEET_DEBUG;
      if (debug) await writeFile(join(debug, 'mosquitto.log'), broker.log());
    });
    const folder = await tempDir(t);

    // The central gateway: Primary Host "central", history of every relayed tag in PostgreSQL.
    const centralState = await seededStateDir(
      t,
      [{ username: 'fleet', kind: 'service', roles: ['Operators'] }],
      'a long password',
    );
    const token = await runTagdCli(centralState, ['tokens', 'generate', 'fleet']);
    t.is(token.code, 0, token.stderr);
    const central: Central = {
      url: `http://127.0.0.1:${await freePort()}`,
      token: token.stdout.trim(),
      stateDir: centralState,
      profileFile: join(folder, 'central.json'),
    };
    await writeFile(
      central.profileFile,
      JSON.stringify({
        license: { file: license },
        drivers: [
          {
            type: 'sparkplug',
            name: 'site',
            brokerUrl: broker.url,
            hostId: 'central',
            groupIds: [group],
            staleAfterMs: 60_000,
          },
        ],
        history: {
          backend: 'postgres',
          url: database,
          log: [{ source: 'site/**', mode: 'onChange' }],
          // Sized as docs/relay.md says a central gateway's must be: the relayed tags × the
          // scans of the longest outage the edges store through (five minutes of 1 s scans).
          bufferLimit: Math.max(100_000, edges * tagsPerEdge * 300),
        },
      }),
    );
    await startCentral(t, central).waitForLog('tagd ready');

    const names = Array.from({ length: edges }, (_, index) => edgeName(index));
    const fleet: Edge[] = await Promise.all(
      names.map((name) => startEdge(t, folder, name, broker.url)),
    );
    await Promise.all(fleet.map((edge) => edge.process.waitForLog('tagd ready')));
    await until('every relayed tag Good', () => allGood(central, names));
    const begin = Date.now();
    t.log(`fleet of ${edges} edges × ${tagsPerEdge} tags Good centrally`);

    // 1. kill -9 of the broker: the host loses it (tags Unavailable), the edges store.
    await broker.kill();
    await until('relayed tags Unavailable without the broker', () =>
      noneGood(central, names[0] as string),
    );
    await sleep(3_000); // the outage itself
    await broker.restart();
    await until('every relayed tag Good after the broker restart', () => allGood(central, names));
    t.log('broker kill -9 and restart: every tag Good again');

    // 2. SIGSTOP of the central tagd: the broker holds its session and queues what the edges
    // send meanwhile (the host's STATE still says online, so they publish live, not store).
    const centralProcess = central.process as TagdProcess;
    signal(centralProcess.child, 'SIGSTOP');
    await sleep(stopMs); // the freeze itself
    t.log(`central SIGSTOP ${stopMs} ms`);

    // 3. Restart of the stuck central tagd as systemd stops it: SIGTERM, then SIGCONT at once
    // (systemd.kill(5)). The backlog of the freeze is still at the broker and in the socket:
    // the host drains it before it leaves (its session is clean, the broker drops what is
    // left); its STATE goes offline, the edges end their sessions and store, then forward.
    const offlineFrom = fleet.map((edge) => edge.process.stdout().length);
    signal(centralProcess.child, 'SIGTERM');
    signal(centralProcess.child, 'SIGCONT');
    t.is(await centralProcess.exited, 0, centralProcess.stderr());
    // The host's account of its drain (asserted after the comparison, which says what it saved).
    const drained = loggedLine(centralProcess, /^Sparkplug host (drained|stopped draining)/) as
      | { msg: string; waitedMs: number; messages: number; dataMetrics: number }
      | undefined;
    t.log(
      drained === undefined
        ? 'central SIGTERM + SIGCONT: no drain logged'
        : `central SIGTERM + SIGCONT: ${drained.messages} messages (${drained.dataMetrics} ` +
            `samples) ingested in the ${drained.waitedMs} ms drain before it left`,
    );
    await Promise.all(
      fleet.map((edge, index) =>
        logLine(edge.process, /primary host 'central' went offline/, offlineFrom[index] ?? 0),
      ),
    );
    await sleep(outageMs); // the outage itself
    const forwardFrom = fleet.map((edge) => edge.process.stdout().length);
    const restarted = Date.now();
    await startCentral(t, central).waitForLog('tagd ready');
    const caughtUp = (await Promise.all(
      fleet.map((edge, index) =>
        logLine(edge.process, /caught up, \d+ stored samples forwarded/, forwardFrom[index] ?? 0),
      ),
    )) as { forwarded: number; samplesPerSecond: number }[];
    await until('every relayed tag Good after the central restart', () => allGood(central, names));
    const forwarded = caughtUp.reduce((sum, line) => sum + line.forwarded, 0);
    t.true(forwarded > 0, 'the edges stored samples while the host was offline');
    t.log(
      `central restart: ${forwarded} stored samples forwarded, ${caughtUp
        .map((line) => line.samplesPerSecond)
        .join(
          ', ',
        )} samples/s per edge; every tag Good ${Date.now() - restarted} ms after the start`,
    );

    // 4. kill -9 of an edge: its tags Unavailable centrally within the bound, and they stay so.
    const victim = fleet[0] as Edge;
    signal(victim.process.child, 'SIGKILL');
    const killedAt = Date.now();
    await victim.process.exited;
    await until('the killed edge’s tags Unavailable', () => noneGood(central, victim.name));
    const deathMs = Date.now() - killedAt;
    t.true(deathMs < deathBoundMs, `the dead edge's tags went Unavailable after ${deathMs} ms`);
    t.log(`edge kill -9: its tags Unavailable centrally after ${deathMs} ms`);
    // The others keep going: a few more scans reach the central side.
    const survivors = fleet.slice(1);
    await until('the survivors still Good', () =>
      allGood(
        central,
        survivors.map((edge) => edge.name),
      ),
    );
    t.truthy(await noneGood(central, victim.name), 'the dead edge’s tags stay not Good');

    // The end: the surviving edges stop cleanly (their history flushed, DDEATH/NDEATH sent),
    // then the central one (its history flushed).
    const stoppedAt = Date.now();
    for (const edge of survivors) signal(edge.process.child, 'SIGTERM');
    for (const edge of survivors) t.is(await edge.process.exited, 0, edge.process.stderr());
    for (const edge of survivors)
      await until(`${edge.name}'s tags not Good after its stop`, () =>
        noneGood(central, edge.name),
      );
    const last = central.process as TagdProcess;
    signal(last.child, 'SIGTERM');
    t.is(await last.exited, 0, last.stderr());

    // The comparison. Central: every sample of every relayed tag, by tag and epoch ms.
    // Through a client, not psql: a bigger fleet's rows exceed psql's output buffer.
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    const result = await client.query<{
      tag: string;
      ms: string;
      quality: string;
      num: number | null;
    }>(
      `SELECT t.full_tag_id AS tag, round(extract(epoch FROM s.time) * 1000)::bigint AS ms,
              s.quality, s.num
         FROM tagd_history_samples s JOIN tagd_history_tags t ON t.id = s.tag_id`,
    );
    await client.end();
    const rows = result.rows.map(
      (row) =>
        [row.tag, String(row.ms), row.quality, row.num === null ? '' : String(row.num)] as const,
    );
    const centralSamples = new Map<string, { quality: string; value: string }[]>();
    for (const [tag, time, quality, value] of rows) {
      const key = `${tag}@${time}`;
      const list = centralSamples.get(key) ?? [];
      list.push({ quality, value });
      centralSamples.set(key, list);
    }
    // Two values of a tag at one timestamp. An Unavailable row the host stamped with its own
    // clock (a death, a lost broker) can fall on the very millisecond of an edge's reading:
    // two different events, not a value logged twice.
    const duplicates = [...centralSamples].filter(
      ([, list]) => list.filter((each) => each.value !== '').length > 1,
    );
    const twiceAt = new Set(
      duplicates.map(([key]) => {
        const [tag, time] = key.split('@') as [string, string];
        return `${tag.split('/')[2]}@${Number(time) - begin}ms`;
      }),
    );

    // Edges: each one's own history over the period. The killed edge's scans after the newest
    // one the central holds were still in its publisher's queue when it died (kill -9 takes a
    // process's memory with it): its tail, not a loss, as long as it is short; any scan missing
    // before that newest one is a hole, lost. (A fixed 3 s allowance was too short on 2 busy
    // cores right after the catch-up: one run in four lost 4–5 s of tail.)
    const victimPrefix = `site/${group}/${victim.name}/`;
    const victimNewest = rows.reduce(
      (newest, [tag, time, quality]) =>
        tag.startsWith(victimPrefix) && quality === 'Good' && Number(time) <= killedAt
          ? Math.max(newest, Number(time))
          : newest,
      begin,
    );
    const victimTailMs = killedAt - victimNewest;
    t.log(`the killed edge's unsent tail: its last ${victimTailMs} ms`);
    t.true(victimTailMs < tailBoundMs, `the killed edge's queue held ${victimTailMs} ms of scans`);
    let compared = 0;
    let kept = 0;
    const lost: string[] = [];
    // Per edge: how many lost, and the earliest and latest of them in ms before the edge's end
    // of comparison (its stop, or its newest scan the central holds), so a failing run says
    // where they were.
    const lostWhere = new Map<string, { count: number; earliest: number; latest: number }>();
    for (const edge of fleet) {
      const until = edge === victim ? victimNewest : stoppedAt;
      const db = new Database(join(edge.stateDir, 'history.db'), { readonly: true });
      const samples = db
        .prepare(
          `SELECT tags.path AS path, samples.t AS t, samples.v AS v FROM samples
             JOIN tags ON tags.id = samples.tag WHERE samples.q = 0 AND samples.t >= ? AND samples.t <= ?`,
        )
        .all(begin, until) as { path: string; t: number; v: number }[];
      db.close();
      t.true(samples.length >= tagsPerEdge, `${edge.name} logged its own samples`);
      const outbox = storedInOutbox(edge);
      for (const sample of samples) {
        compared++;
        const key = `site/${group}/${edge.name}/${sample.path}@${sample.t}`;
        const found = centralSamples.get(key);
        if (found?.some((each) => each.quality === 'Good' && Number(each.value) === sample.v))
          continue;
        // A scan read after the publisher's last tick, when the edge stopped: stored in its
        // outbox for its next start (the publisher stops before the drivers), not lost.
        if (outbox.get(`${sample.path}@${sample.t}`) === sample.v) {
          kept++;
          continue;
        }
        lost.push(`${key}=${sample.v} (central: ${JSON.stringify(found)})`);
        const before = until - sample.t;
        const where = lostWhere.get(edge.name) ?? { count: 0, earliest: before, latest: before };
        where.count++;
        where.earliest = Math.max(where.earliest, before);
        where.latest = Math.min(where.latest, before);
        lostWhere.set(edge.name, where);
      }
    }
    // Both figures first: a failing run says how many of each.
    t.log(
      `${compared} edge samples compared with the central history: ${lost.length} lost, ` +
        `${duplicates.length} duplicated, ${kept} kept in a stopped edge's outbox`,
    );
    for (const [name, where] of lostWhere) {
      t.log(
        `${name}${name === victim.name ? ' (killed)' : ''}: ${where.count} lost, read ` +
          `${where.earliest} to ${where.latest} ms before its end of comparison`,
      );
    }
    t.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${compared} edge samples not central`);
    t.deepEqual(
      duplicates.slice(0, 2),
      [],
      `${duplicates.length} tag+timestamps stored twice, at (edge@ms after all Good): ${[...twiceAt].join(' ')}`,
    );

    // The restart after the freeze: every edge answered the offline STATE with its NDEATH, so
    // the drain ended there, not at its bound.
    t.regex(String(drained?.msg), /drained before leaving/);

    // No tag of the dead edge Good centrally after the kill.
    const goodAfterDeath = rows.filter(
      ([tag, time, quality]) =>
        tag.startsWith(`site/${group}/${victim.name}/`) &&
        Number(time) > killedAt &&
        quality === 'Good',
    );
    t.deepEqual(goodAfterDeath.slice(0, 5), []);
  },
);
