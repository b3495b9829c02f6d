import test from 'ava';
import {
  formatRequestPath,
  maxPathSegments,
  parseRequestPath,
} from '../../src/web/request-path.js';

test('plain paths become decoded segments; a final / is an empty last segment', (t) => {
  t.deepEqual(parseRequestPath('/andon/css/site.css'), {
    ok: true,
    segments: ['andon', 'css', 'site.css'],
  });
  t.deepEqual(parseRequestPath('/andon/'), { ok: true, segments: ['andon', ''] });
  t.deepEqual(parseRequestPath('/andon'), { ok: true, segments: ['andon'] });
  t.deepEqual(parseRequestPath('/'), { ok: true, segments: [''] });
  t.deepEqual(parseRequestPath('/a/Gr%C3%BC%C3%9Fe%201.txt'), {
    ok: true,
    segments: ['a', 'Grüße 1.txt'],
  });
  t.deepEqual(parseRequestPath('/a/%252e%252e'), { ok: true, segments: ['a', '%2e%2e'] });
  t.deepEqual(parseRequestPath('/a/.env'), { ok: true, segments: ['a', '.env'] });
});

test('anything that could leave the folder or confuse a file name is refused, with a reason', (t) => {
  const refused: [string, RegExp][] = [
    ['andon/x', /must start with \//],
    ['/a/../b', /dot segment/],
    ['/a/./b', /dot segment/],
    ['/a/%2e%2e/b', /dot segment/],
    ['/a/%2E%2e/b', /dot segment/],
    ['/a/.%2E', /dot segment/],
    ['/a/b%2f..%2fc', /encoded separator/],
    ['/a/b%2Fc', /encoded separator/],
    ['/a/b%5cc', /encoded separator/],
    ['/a\\..\\b', /backslash/],
    ['/a/b%00.js', /control character/],
    ['/a/b%0a', /control character/],
    ['/a/b%7f', /control character/],
    ['/a/%c0%ae%c0%ae', /does not decode/],
    ['/a/%', /does not decode/],
    ['/a//b', /empty segment/],
    [`/${'a/'.repeat(maxPathSegments)}b`, /more than 32 segments/],
  ];
  for (const [path, reason] of refused) {
    const parsed = parseRequestPath(path);
    t.false(parsed.ok, path);
    if (!parsed.ok) t.regex(parsed.reason, reason, path);
  }
});

test('formatRequestPath encodes each segment, so a Location names exactly that file', (t) => {
  t.is(formatRequestPath(['andon', 'css', '']), '/andon/css/');
  t.is(formatRequestPath(['a b', 'ü?#', '']), '/a%20b/%C3%BC%3F%23/');
  const round = parseRequestPath(formatRequestPath(['x', 'Grüße 1.txt']));
  t.deepEqual(round, { ok: true, segments: ['x', 'Grüße 1.txt'] });
});
