import test from 'ava';
import { replaceUrls, replaceWholeTokens } from '../src/whole-tokens.js';

test('a token is replaced where it stands alone, never inside a word', (t) => {
  t.is(replaceWholeTokens('user u must wait', ['u'], 'X'), 'user X must wait');
  t.is(replaceWholeTokens('u_x u-x (u) u.', ['u'], 'X'), 'u_x X-x (X) X.');
  t.is(replaceWholeTokens('überall ü', ['ü'], 'X'), 'überall X', 'letters beyond ASCII count');
});

test('a token that starts or ends with punctuation needs no boundary on that side', (t) => {
  t.is(
    replaceWholeTokens('host:8443/hooks/abc?k=1 done', ['/hooks/abc', '?k=1'], 'X'),
    'host:8443XX done',
  );
  t.is(replaceWholeTokens('/hooks/abcd', ['/hooks/abc'], 'X'), '/hooks/abcd');
});

test('one pass, longest first: a replacement is not searched again', (t) => {
  t.is(
    replaceWholeTokens('the b.example the', ['the', 'b.example'], 'the host'),
    'the host the host the host',
  );
  t.is(replaceWholeTokens('a+b (a+b)', ['a+b', ''], 'X'), 'X (X)', 'regex characters are literal');
  t.is(replaceWholeTokens('nothing', [], 'X'), 'nothing');
});

test('URLs with a scheme are replaced whole, the end of the sentence kept', (t) => {
  t.is(
    replaceUrls('to https://u:p@h.example:8443/x?y=z, then mqtts://b/. Done', 'it'),
    'to it, then it. Done',
  );
  t.is(replaceUrls("'opc.tcp://plc:4840/UA' failed", 'it'), "'it' failed");
});
