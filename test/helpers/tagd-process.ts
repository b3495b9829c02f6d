import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Path of the CLI source, run through tsx like `npm run dev`. */
export const cliSource = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A `tagd` process with its output collected. */
export interface TagdProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /**
   * Resolves with the exit code (or signal name) once the process ended and its stdout and
   * stderr are read to the end ('close', not 'exit': on a busy machine output can still be in
   * the pipe when 'exit' fires, and `stdout()` read then was empty).
   */
  exited: Promise<number | string>;
  /**
   * Resolves with the first JSON log line whose msg equals `message`; rejects at once if the
   * process exits first. `timeoutMs` (default {@link logWaitMs}) is only a safety net for a
   * process that hangs: the wait ends on the line or the exit, never on a duration.
   */
  waitForLog(message: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/**
 * Safety bound of {@link TagdProcess.waitForLog}, ms. Generous on purpose: `tagd start` through
 * tsx costs about 1.5 s of CPU before its first line and the daemon's start-up another 0.5 s,
 * so on a 2-core box running the whole suite (a dozen such processes, tsc, PostgreSQL) it took
 * over 20 s, the old bound, to become ready (issue 10 item 9).
 */
export const logWaitMs = 180_000;

/**
 * Starts `tagd ARGS…` as a child process. By default it runs the TypeScript source through tsx;
 * pass `entry` to run a built `dist/src/cli.js` with plain node. With `input`, stdin is a pipe
 * that receives it and then ends; without, stdin is /dev/null.
 */
export function startTagd(
  args: string[],
  options: { env?: Record<string, string>; entry?: string; cwd?: string; input?: string } = {},
): TagdProcess {
  const nodeArgs = options.entry ? [options.entry] : ['--import', 'tsx', cliSource];
  const child = spawn(process.execPath, [...nodeArgs, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, TAGD_LOG_LEVEL: 'info', ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  // EPIPE when tagd exits without reading (a usage error) is not the test's concern.
  child.stdin?.on('error', () => undefined);
  if (options.input !== undefined) child.stdin?.end(options.input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on('close', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const waitForLog = (message: string, timeoutMs = logWaitMs) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(`no '${message}' within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`),
        );
      }, timeoutMs);
      timer.unref();
      const check = () => {
        for (const line of stdout.split('\n')) {
          if (!line.startsWith('{')) continue;
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (parsed.msg === message) {
            cleanup();
            resolve(parsed);
            return;
          }
        }
      };
      const onExit = () => {
        cleanup();
        reject(new Error(`exited before '${message}'; stdout: ${stdout}; stderr: ${stderr}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        child.off('exit', onExit);
      };
      child.stdout?.on('data', check);
      child.on('exit', onExit);
      check();
    });
  return { child, stdout: () => stdout, stderr: () => stderr, exited, waitForLog };
}
