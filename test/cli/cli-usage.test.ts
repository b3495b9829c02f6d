/**
 * The command line behaves like one: usage errors exit 2 in every command, help works for every
 * command, the version has its usual spellings, a bad TAGD_LOG_LEVEL is named.
 */
import test from 'ava';
import { version } from '../../src/version.js';
import { startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

async function run(args: string[], env: Record<string, string> = {}) {
  const process = startTagd(args, { env });
  const code = await process.exited;
  return { code, stdout: process.stdout(), stderr: process.stderr() };
}

test('--version, -v and version print the version', async (t) => {
  for (const args of [['--version'], ['-v'], ['version']]) {
    const result = await run(args);
    t.is(result.code, 0, args.join(' '));
    t.is(result.stdout, `${version}\n`);
  }
});

test('an unknown option or a stray argument is a usage error (exit 2) in every command', async (t) => {
  const stateDir = await tempDir(t);
  const cases = [
    ['start', '--bogus'],
    ['start', 'extra'],
    ['profile', 'check', 'a.json', '--bogus'],
    ['profile', 'check'],
    ['users', 'list', '--bogus'],
    ['tokens', 'generate', 'svc', '--bogus'],
    ['opcua', 'list', '--bogus'],
    ['version', 'extra'],
    ['frobnicate'],
  ];
  for (const args of cases) {
    const result = await run(args, { TAGD_STATE_DIR: stateDir });
    t.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, /^tagd: /, args.join(' '));
    t.regex(result.stderr, /Usage:/, `${args.join(' ')} shows the usage`);
  }
});

test('tagd help, tagd COMMAND --help and tagd help COMMAND print the usage and exit 0', async (t) => {
  const top = await run(['help']);
  t.is(top.code, 0);
  t.regex(top.stdout, /tagd start \[--profile FILE\]/);
  t.regex(top.stdout, /Exit codes: 0 ok, 1 failure, 2 usage error, 78 configuration error/);
  const expected: Record<string, RegExp> = {
    start: /--listen HOST:PORT {2}replaces/,
    profile: /tagd profile check FILE/,
    users: /tagd users add NAME/,
    tokens: /tagd tokens generate NAME/,
    opcua: /tagd opcua trust FILE\|THUMBPRINT/,
    version: /tagd version {3}print the version/,
  };
  for (const [command, usage] of Object.entries(expected)) {
    const result = await run([command, '--help']);
    t.is(result.code, 0, command);
    t.regex(result.stdout, usage, command);
  }
  for (const args of [
    ['start', '-h'],
    ['help', 'start'],
  ]) {
    const result = await run(args);
    t.is(result.code, 0, args.join(' '));
    t.regex(result.stdout, expected.start as RegExp, args.join(' '));
  }
  // A subcommand's --help is help too, not an unknown option.
  const sub = await run(['users', 'add', 'someone', '--help']);
  t.is(sub.code, 0);
  t.regex(sub.stdout, /tagd users add NAME/);
});

test('an invalid TAGD_LOG_LEVEL is named with the valid levels, exit 78 (configuration)', async (t) => {
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
