/**
 * The command line behaves like one: usage errors exit 2 in every command, help works for every
 * command, the version has its usual spellings, a bad TAGD_LOG_LEVEL is named.
 */
import test from 'ava';
import { version } from '../../src/version.js';
import { startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

// Each case spawns a tsx process, which takes seconds on a busy machine: the cases of a test run
// concurrently, at most `parallel` processes of this file at once, and each test gets a bound
// far above what it needs (never asserted on).
const parallel = 4;
const testTimeoutMs = 600_000;
let running = 0;
const waiting: (() => void)[] = [];

async function run(args: string[], env: Record<string, string> = {}) {
  while (running >= parallel) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    const process = startTagd(args, { env });
    const code = await process.exited;
    return { code, stdout: process.stdout(), stderr: process.stderr() };
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs every command line concurrently; results in the same order. */
function runAll(cases: string[][], env: Record<string, string> = {}) {
  return Promise.all(cases.map((args) => run(args, env)));
}

test('--version, -v and version print the version', async (t) => {
  t.timeout(testTimeoutMs);
  const cases = [['--version'], ['-v'], ['version']];
  for (const [index, result] of (await runAll(cases)).entries()) {
    t.is(result.code, 0, cases[index]?.join(' '));
    t.is(result.stdout, `${version}\n`);
  }
});

test('an unknown option or a stray argument is a usage error (exit 2) in every command', async (t) => {
  t.timeout(testTimeoutMs);
  const stateDir = await tempDir(t);
  const cases = [
    ['start', '--bogus'],
    ['start', 'extra'],
    ['profile', 'check', 'a.json', '--bogus'],
    ['profile', 'check'],
    ['users', 'list', '--bogus'],
    ['tokens', 'generate', 'svc', '--bogus'],
    ['opcua', 'list', '--bogus'],
    ['status', '--bogus'],
    ['status', 'extra'],
    ['version', 'extra'],
    ['frobnicate'],
  ];
  const results = await runAll(cases, { TAGD_STATE_DIR: stateDir });
  for (const [index, args] of cases.entries()) {
    const result = results[index] as Awaited<ReturnType<typeof run>>;
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, /^tagd: /, args.join(' '));
    t.regex(result.stderr, /Usage:/, `${args.join(' ')} shows the usage`);
  }
});

test('a command word that names a property of every object is an unknown command (exit 2) and runs nothing', async (t) => {
  t.timeout(testTimeoutMs);
  const stateDir = await tempDir(t);
  const cases = [
    ['constructor', 'list'],
    ['toString'],
    ['__proto__', 'list'],
    ['hasOwnProperty', '--help'],
  ];
  const results = await runAll(cases, { TAGD_STATE_DIR: stateDir });
  for (const [index, args] of cases.entries()) {
    const result = results[index] as Awaited<ReturnType<typeof run>>;
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.true(
      result.stderr.startsWith(`tagd: unknown command '${args[0]}'\n`),
      `${args.join(' ')}: ${result.stderr}`,
    );
    t.is(result.stdout, '', `${args.join(' ')} printed nothing else`);
  }
  const topics = ['toString', 'constructor', '__proto__', 'valueOf'];
  const help = await runAll(topics.map((topic) => ['help', topic]));
  for (const [index, topic] of topics.entries()) {
    const result = help[index] as Awaited<ReturnType<typeof run>>;
    t.is(result.code, 2, `help ${topic}: ${result.stderr}`);
    t.true(
      result.stderr.startsWith(
        `tagd: no help on '${topic}'; commands: start, profile, users, tokens, opcua, status, version\n`,
      ),
      `help ${topic}: ${result.stderr}`,
    );
    t.is(result.stdout, '');
  }
});

test('tagd help, tagd COMMAND --help and tagd help COMMAND print the usage and exit 0', async (t) => {
  t.timeout(testTimeoutMs);
  const top = await run(['help']);
  t.is(top.code, 0);
  t.regex(top.stdout, /tagd start \[--profile FILE\]/);
  t.regex(
    top.stdout,
    /Exit codes: 0 ok, 1 failure, 2 usage error, 3 \(tagd status\) something is in error,\n78 configuration error/,
  );
  const expected: Record<string, RegExp> = {
    start: /--listen HOST:PORT {2}replaces/,
    profile: /tagd profile check FILE/,
    users: /tagd users add NAME/,
    tokens: /tagd tokens generate NAME/,
    opcua: /tagd opcua trust FILE\|THUMBPRINT/,
    status: /tagd status \[--url URL\] \[--json\]/,
    version: /tagd version {3}print the version/,
  };
  const commands = Object.entries(expected);
  const results = await runAll(commands.map(([command]) => [command, '--help']));
  for (const [index, [command, usage]] of commands.entries()) {
    const result = results[index] as Awaited<ReturnType<typeof run>>;
    t.is(result.code, 0, command);
    t.regex(result.stdout, usage, command);
  }
  const spellings = [
    ['start', '-h'],
    ['help', 'start'],
  ];
  for (const [index, result] of (await runAll(spellings)).entries()) {
    const args = spellings[index]?.join(' ');
    t.is(result.code, 0, args);
    t.regex(result.stdout, expected.start as RegExp, args);
  }
  // A subcommand's --help is help too, not an unknown option.
  const sub = await run(['users', 'add', 'someone', '--help']);
  t.is(sub.code, 0);
  t.regex(sub.stdout, /tagd users add NAME/);
});

test('an invalid TAGD_LOG_LEVEL is named with the valid levels, exit 78 (configuration)', async (t) => {
  t.timeout(testTimeoutMs);
  const result = await run(['start', '--profile', 'config/demo.json'], {
    TAGD_LOG_LEVEL: 'verbose',
  });
  t.is(result.code, 78);
  t.is(
    result.stderr,
    "tagd: TAGD_LOG_LEVEL 'verbose' is not a log level; use one of: trace, debug, info, warn, error, fatal, silent.\n",
  );
  t.is(result.stdout, '', 'nothing started');
});

test('an empty TAGD_LOG_LEVEL (systemd Environment=TAGD_LOG_LEVEL=) means the default level', async (t) => {
  t.timeout(testTimeoutMs);
  const stateDir = await tempDir(t);
  const result = await run(['users', 'list'], { TAGD_LOG_LEVEL: '', TAGD_STATE_DIR: stateDir });
  t.is(result.code, 0, result.stderr);
  t.false(result.stderr.includes('TAGD_LOG_LEVEL'), result.stderr);
});
