/**
 * A real Prometheus server (Debian package `prometheus`; .ci/run installs it) for the metrics
 * tests: a generated configuration scraping given targets every second, storage in a temp dir,
 * its web API on a free loopback port, stopped when the test ends.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { tempDir } from './temp-dir.js';

/** The Debian package's server. */
export const prometheusPath = '/usr/bin/prometheus';
/** The Debian package's checker (`promtool check rules`). */
export const promtoolPath = '/usr/bin/promtool';

/**
 * Why Prometheus tests cannot run here, or undefined when they can. Outside CI a missing
 * package skips them; in CI (`CI` set) it does not, so a broken install fails instead of hiding.
 */
export function prometheusSkipReason(): string | undefined {
  if ((existsSync(prometheusPath) && existsSync(promtoolPath)) || process.env.CI) return undefined;
  return `${prometheusPath} is missing (apt-get install prometheus) and CI is not set`;
}

/** A scrape job of the generated configuration. */
export interface ScrapeJob {
  job: string;
  /** `host:port` of each target. */
  targets: string[];
  /** Default `/metrics`. */
  metricsPath?: string;
  /** Sent as `Authorization: Bearer …` when set. */
  bearerToken?: string;
}

/** A running Prometheus. */
export interface PrometheusServer {
  /** Base URL of its web UI and HTTP API, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Its output so far (stdout and stderr), for failure messages. */
  output(): string;
  /**
   * Runs an instant query (`/api/v1/query`) and returns its vector result.
   * @throws when Prometheus answers an error.
   */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
}

/** A port free on 127.0.0.1 now (Prometheus cannot tell which port it took when given 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The prometheus.yml of `jobs`, every target scraped once a second. */
export function prometheusConfig(jobs: readonly ScrapeJob[]): string {
  const lines = ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', 'scrape_configs:'];
  for (const job of jobs) {
    lines.push(`  - job_name: ${JSON.stringify(job.job)}`);
    lines.push(`    metrics_path: ${JSON.stringify(job.metricsPath ?? '/metrics')}`);
    if (job.bearerToken !== undefined) {
      lines.push('    authorization:', `      credentials: ${JSON.stringify(job.bearerToken)}`);
    }
    lines.push('    static_configs:', `      - targets: ${JSON.stringify(job.targets)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Starts Prometheus scraping `jobs`; resolves once it is ready (`/-/ready`). */
export async function startPrometheus(
  t: ExecutionContext,
  jobs: readonly ScrapeJob[],
): Promise<PrometheusServer> {
  const folder = await tempDir(t);
  const configFile = join(folder, 'prometheus.yml');
  await writeFile(configFile, prometheusConfig(jobs));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    prometheusPath,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(folder, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  // Registered after tempDir's teardown, so it runs first: Prometheus quits before its folder goes.
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  const server: PrometheusServer = {
    url,
    output: () => output,
    async query(promql) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const answer = (await response.json()) as {
        status: string;
        error?: string;
        data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (answer.status !== 'success') throw new Error(`query failed: ${answer.error}`);
      return answer.data?.result ?? [];
    },
  };
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited:\n${output}`);
      try {
        return (await fetch(`${url}/-/ready`)).ok;
      } catch {
        return false;
      }
    },
    30_000,
    () => `prometheus not ready:\n${output}`,
  );
  return server;
}

/**
 * Polls `check` every 200 ms until it returns true; throws `message()` after `boundMs`. For
 * events another process decides (a scrape), where no notification can be awaited.
 */
export async function waitUntil(
  check: () => Promise<boolean>,
  boundMs: number,
  message: () => string,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
