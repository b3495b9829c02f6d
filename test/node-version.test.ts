import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { exitCodes } from '../src/exit-codes.js';
import { nodeVersionProblem, supportedNode } from '../src/node-version.js';
import { repoRoot } from './helpers/tagd-process.js';

const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));

test('supported: 20.19 and later 20.x, and 22 and later', (t) => {
  for (const version of ['20.19.0', '20.20.2', '22.0.0', '24.11.1', 'v22.3.0']) {
    t.is(nodeVersionProblem(version), undefined, version);
  }
});

test('refused with one line naming the version and what is needed', (t) => {
  for (const version of ['18.19.0', '20.18.3', '21.7.3', '16.20.2', '12.22.12']) {
    const problem = nodeVersionProblem(version) ?? '';
    t.regex(
      problem,
      new RegExp(
        `^tagd: Node\\.js ${version.replaceAll('.', '\\.')} is not supported; tagd needs Node\\.js 20\\.19 or later`,
      ),
      version,
    );
    t.false(problem.includes('\n'));
  }
  t.regex(nodeVersionProblem('banana') ?? '', /cannot read the Node\.js version 'banana'/);
});

test('the check follows package.json engines', async (t) => {
  const manifest = JSON.parse(
    await readFile(new URL('../package.json', import.meta.url), 'utf8'),
  ) as {
    engines: { node: string };
    bin: { tagd: string };
  };
  t.is(manifest.engines.node, supportedNode);
  t.is(manifest.bin.tagd, 'dist/src/bin.js', 'the tagd command is the checking entry point');
});

/** Runs src/bin.ts through tsx, with process.versions.node replaced when `pretend` is given. */
function runBin(args: string[], pretend?: string) {
  const preload = pretend
    ? [
        '--import',
        `data:text/javascript,Object.defineProperty(process.versions,'node',{value:${JSON.stringify(pretend)}})`,
      ]
    : [];
  const child = spawn(process.execPath, [...preload, '--import', 'tsx', bin, ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}

test('the tagd command refuses an old Node with one line and exit 78, before loading the CLI', async (t) => {
  t.timeout(120_000);
  const refused = await runBin(['--version'], '18.19.0');
  t.is(refused.code, exitCodes.config);
  t.is(refused.stdout, '', 'the CLI never ran');
  t.regex(refused.stderr, /^tagd: Node\.js 18\.19\.0 is not supported; [^\n]*\n$/);
});

test('the tagd command runs the CLI on a supported Node', async (t) => {
  t.timeout(120_000);
  const { version } = await import('../src/version.js');
  const ran = await runBin(['--version']);
  t.is(ran.code, 0, ran.stderr);
  t.is(ran.stdout, `${version}\n`);
});
