import { readFile } from 'node:fs/promises';
import test from 'ava';
import * as errors from '../src/errors.js';
import { errorCodes, TagdError } from '../src/errors.js';

test('the error table of docs/errors.md and src/errors.ts list the same codes and statuses', async (t) => {
  const page = await readFile(new URL('../docs/errors.md', import.meta.url), 'utf8');
  t.true(page.startsWith('# Errors\n'));
  const section = page.slice(page.indexOf('# Errors'));
  const rows = [...section.matchAll(/^\| `([a-z-]+)` \| (\d{3}) \| (.+) \|$/gm)].map((match) => ({
    code: match[1],
    status: Number(match[2]),
  }));
  const listed = Object.entries(errorCodes).map(([code, entry]) => ({
    code,
    status: entry.status,
  }));
  const byCode = (a: { code?: string }, b: { code?: string }) =>
    String(a.code).localeCompare(String(b.code));
  t.deepEqual(rows.sort(byCode), listed.sort(byCode));
});

test('every error class raises a code listed in errorCodes, with its status', (t) => {
  const samples: TagdError[] = [
    new errors.ValidationError('x', []),
    new errors.ExpressionInvalidError('e', []),
    new errors.CredentialsRefusedError('password', 'w'),
    new errors.InvalidTagPathError('a//b', 'empty segment'),
    new errors.TagNotFoundError('A/B'),
    new errors.CollectionNotFoundError('C'),
    new errors.ProfileNotFoundError('/p.json'),
    new errors.ProfileCorruptError('/p.json', 'line 1'),
    new errors.ProfileInvalidError('/p.json', []),
    new errors.SecretKeyError('k'),
    new errors.SecretUnsealError('a.b'),
    new errors.DriverLoadError('d'),
    new errors.ListenerError('l'),
    new errors.ProfileFileError('/f.pem', 'missing', 'm'),
    new errors.StateDirLockedError('/var/lib/tagd', 42, '/var/lib/tagd/daemon.lock'),
    new errors.StateDirUnusableError('/var/lib/tagd', 'read-only'),
    new errors.NotFoundError(),
    new errors.UnauthorizedError(),
    new errors.ForbiddenError('f'),
    new errors.ForbiddenError('c', 'csrf-failed'),
    new errors.ForbiddenError('l', 'feature-unavailable'),
    new errors.TooManyRequestsError('t', 5),
    new errors.TooManyRequestsError('q', 5, 'query-capacity-reached'),
    new errors.TooManyRequestsError('s', 5, 'stream-capacity-reached'),
    new errors.ConflictError('history-not-configured', 'h'),
    new errors.ConflictError('already-exists', 'a'),
    new errors.ConflictError('limit-reached', 'l'),
    new errors.ConflictError('last-administrator', 'a'),
    new errors.ConflictError('alarm-state-conflict', 'a'),
    new errors.ConflictError('proposal-not-pending', 'p'),
    new errors.ConflictError('two-factor-state', 't'),
    new errors.ConflictError('assistant-not-configured', 'a'),
    new errors.ConflictError('conversation-busy', 'c'),
    new errors.AssistantUnavailableError('assistant-unavailable', 'a'),
    new errors.AssistantUnavailableError('assistant-timeout', 't'),
    new errors.RequestError('bad-request', 400, 'b'),
    new errors.RequestError('payload-too-large', 413, 'p'),
    new errors.RequestError('query-too-large', 413, 'q'),
    new errors.RequestError('unsupported-media-type', 415, 'u'),
    new errors.RequestError('method-not-allowed', 405, 'm'),
    new errors.RequestError('not-implemented', 501, 'n'),
    new errors.RequestError('headers-too-large', 431, 'h'),
    new errors.RequestError('request-timeout', 408, 'r'),
    new errors.RequestError('expectation-failed', 417, 'e'),
    new errors.ServiceBusyError('b'),
    new errors.HistoryUnavailableError(),
    new errors.AlarmJournalUnavailableError(),
    new errors.InternalError(),
  ];
  const classes = Object.values(errors).filter(
    (value) => typeof value === 'function' && value.prototype instanceof TagdError,
  );
  const sampled = new Set(samples.map((sample) => sample.constructor));
  t.is(sampled.size, classes.length, 'every exported error class has a sample here');
  for (const error of samples) {
    const entry = errorCodes[error.code as keyof typeof errorCodes];
    t.truthy(entry, `${error.name} code ${error.code} is listed`);
    t.is(error.status, entry?.status, error.name);
    t.is(error.name, error.constructor.name);
  }
});
