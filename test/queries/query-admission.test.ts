import { once } from 'node:events';
import { Writable } from 'node:stream';
import test from 'ava';
import { TooManyRequestsError } from '../../src/errors.js';
import { QueryAdmission } from '../../src/queries/query-admission.js';

/** A response stand-in that accepts writes (the admission only watches it end or close). */
function response(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}

function refusal(t: import('ava').ExecutionContext, work: () => unknown): TooManyRequestsError {
  const error = t.throws(work, { instanceOf: TooManyRequestsError }) as TooManyRequestsError;
  t.is(error.code, 'query-capacity-reached');
  t.is(error.status, 429);
  t.is(error.retryAfterSeconds, 1);
  return error;
}

test('an account holds at most its share, all accounts at most the total; a release frees a slot once', (t) => {
  const admission = new QueryAdmission({ perAccount: 2, total: 3 });
  const a1 = admission.enter('a');
  admission.enter('a');
  const error = refusal(t, () => admission.enter('a'));
  t.regex(error.message, /^This account has 2 TagQuerySet requests in progress.* \(2\)/);
  admission.enter('b');
  // b is under its share, but the gateway is full.
  t.regex(
    refusal(t, () => admission.enter('b')).message,
    /^The gateway is answering 3 TagQuerySet requests.*\(3 for all accounts together\)/,
  );
  t.is(admission.size, 3);
  a1();
  a1();
  t.is(admission.size, 2);
  admission.enter('b');
  refusal(t, () => admission.enter('c'));
});

test('run holds the slot until the work has settled and the response has been written', async (t) => {
  const admission = new QueryAdmission({ perAccount: 1, total: 4 });
  const out = response();
  t.is(await admission.run('a', out, async () => 'answer'), 'answer');
  // The answer is not written yet: the account is still at its limit.
  refusal(t, () => admission.enter('a'));
  out.end('answer');
  await once(out, 'finish');
  await new Promise((resolve) => setImmediate(resolve));
  t.is(admission.size, 0);
  admission.enter('a')();
});

test('run releases after a failed work once the error answer is written', async (t) => {
  const admission = new QueryAdmission({ perAccount: 1, total: 1 });
  const out = response();
  await t.throwsAsync(
    admission.run('a', out, async () => {
      throw new Error('refused');
    }),
    { message: 'refused' },
  );
  t.is(admission.size, 1);
  out.end();
  await once(out, 'finish');
  await new Promise((resolve) => setImmediate(resolve));
  t.is(admission.size, 0);
});

test('an aborted request keeps its slot until its work ends, then frees it', async (t) => {
  const admission = new QueryAdmission({ perAccount: 1, total: 1 });
  const out = response();
  let finish!: () => void;
  const working = admission.run('a', out, () => new Promise<void>((resolve) => (finish = resolve)));
  out.destroy();
  await once(out, 'close');
  // The work still runs (and holds its memory): no new request may start.
  refusal(t, () => admission.enter('b'));
  finish();
  await working;
  await new Promise((resolve) => setImmediate(resolve));
  t.is(admission.size, 0);
});

test('a refused request takes no slot', async (t) => {
  const admission = new QueryAdmission({ perAccount: 1, total: 1 });
  admission.enter('a');
  let ran = false;
  await t.throwsAsync(
    admission.run('a', response(), async () => {
      ran = true;
    }),
    { instanceOf: TooManyRequestsError },
  );
  t.false(ran);
  t.is(admission.size, 1);
});
