import test from 'ava';
import { SignInLimiter } from '../../src/auth/sign-in-limiter.js';

function limiter() {
  let now = 1_000_000;
  const subject = new SignInLimiter(() => now, { perAccount: 3, perAddress: 5, windowMs: 60_000 });
  return { subject, advance: (ms: number) => (now += ms) };
}

test('an account is limited after its failures until the oldest leaves the window', (t) => {
  const { subject, advance } = limiter();
  for (let i = 0; i < 3; i++) {
    t.is(subject.retryAfterSeconds('alice', '10.0.0.1'), 0);
    subject.recordFailure('alice', '10.0.0.1');
    advance(10_000);
  }
  // Failures at 0 s, 10 s, 20 s; now 30 s: the first leaves the window at 60 s.
  t.is(subject.retryAfterSeconds('alice', '10.0.0.2'), 30, 'another address does not help');
  advance(29_999);
  t.is(subject.retryAfterSeconds('alice', '10.0.0.2'), 1);
  advance(1);
  t.is(subject.retryAfterSeconds('alice', '10.0.0.2'), 0);
  t.is(subject.retryAfterSeconds('bob', '10.0.0.9'), 0, 'other accounts are not affected');
});

test('an account is counted whatever the case of its name', (t) => {
  // Names are case-insensitive: Alice, ALICE and alice are one account, so changing the case
  // must not buy new guesses.
  const { subject } = limiter();
  for (const name of ['alice', 'Alice', 'ALICE'])
    subject.recordFailure(name, `10.0.0.${name.length}`);
  t.is(subject.retryAfterSeconds('aLiCe', '10.0.0.9'), 60);
  subject.recordSuccess('ALICE');
  t.is(subject.retryAfterSeconds('alice', '10.0.0.9'), 0);
});

test('an address is limited across account names', (t) => {
  const { subject } = limiter();
  for (let i = 0; i < 5; i++) subject.recordFailure(`user${i}`, '10.0.0.1');
  t.is(subject.retryAfterSeconds('fresh-name', '10.0.0.1'), 60);
  t.is(subject.retryAfterSeconds('fresh-name', '10.0.0.2'), 0);
});

test('a success clears the account, not the address', (t) => {
  const { subject } = limiter();
  for (let i = 0; i < 3; i++) subject.recordFailure('alice', '10.0.0.1');
  subject.recordSuccess('alice');
  t.is(subject.retryAfterSeconds('alice', '10.0.0.3'), 0);
  for (let i = 0; i < 2; i++) subject.recordFailure('carol', '10.0.0.1');
  t.is(subject.retryAfterSeconds('someone', '10.0.0.1'), 60, 'the address still counts all five');
});

test('clearAccount lifts an account limit but keeps the address limit', (t) => {
  const now = Date.UTC(2026, 0, 1);
  const limiter = new SignInLimiter(() => now, { perAccount: 2, perAddress: 3, windowMs: 60_000 });
  limiter.recordFailure('alice', '10.0.0.1');
  limiter.recordFailure('alice', '10.0.0.1');
  t.true(limiter.retryAfterSeconds('alice', '10.0.0.2') > 0);
  t.true(limiter.clearAccount('alice'));
  t.false(limiter.clearAccount('alice'), 'nothing left to clear');
  t.is(limiter.retryAfterSeconds('alice', '10.0.0.2'), 0);
  limiter.recordFailure('bob', '10.0.0.1');
  t.true(limiter.clearAccount('bob'));
  t.true(limiter.retryAfterSeconds('alice', '10.0.0.1') > 0, 'the address keeps its count');
});
