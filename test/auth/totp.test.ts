import test from 'ava';
import { matchTotpStep, newTotpSecret, totpCode, totpUri } from '../../src/auth/totp.js';

// RFC 6238 appendix B: SHA-1 secret "12345678901234567890" (base32 below); at T = 59 s the
// 8-digit code is 94287082, so the 6-digit code is its last six digits.
const rfcSecret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

test('codes match the RFC 6238 test vectors', (t) => {
  t.is(totpCode('x', rfcSecret, 59_000), '287082');
  t.is(totpCode('x', rfcSecret, 1_111_111_109_000), '081804');
  t.is(totpCode('x', rfcSecret, 1_234_567_890_000), '005924');
});

test('a code matches its own step and the neighbouring ones only', (t) => {
  const at = 1_234_567_890_000;
  const step = Math.floor(at / 30_000);
  const code = totpCode('x', rfcSecret, at);
  t.is(matchTotpStep('x', rfcSecret, code, at), step);
  t.is(matchTotpStep('x', rfcSecret, code, at + 30_000), step, 'one step late is accepted');
  t.is(matchTotpStep('x', rfcSecret, code, at - 30_000), step, 'one step early is accepted');
  t.is(matchTotpStep('x', rfcSecret, code, at + 60_000), undefined, 'two steps late is not');
  t.is(matchTotpStep('x', rfcSecret, 'abcdef', at), undefined);
  t.is(matchTotpStep('x', rfcSecret, '12345', at), undefined);
});

test('new secrets are 160-bit base32 and the URI names issuer and account', (t) => {
  const secret = newTotpSecret();
  t.regex(secret, /^[A-Z2-7]{32}$/);
  t.not(secret, newTotpSecret());
  const uri = totpUri('alice', secret);
  t.true(uri.startsWith('otpauth://totp/tagd:alice?'), uri);
  t.true(uri.includes(`secret=${secret}`));
  t.true(uri.includes('period=30'));
  t.true(uri.includes('digits=6'));
});
