import test from 'ava';
import { parseExactJson } from '../../../drivers/mqtt/exact-json.js';
import {
  jsonPointerProblem,
  parseJsonPointer,
  resolveJsonPointer,
} from '../../../drivers/mqtt/json-pointer.js';

test('JSON Pointers (RFC 6901): tokens, escapes, arrays, the whole document', (t) => {
  const document = parseExactJson(
    '{"a": {"b/c": [10, {"~d": 20}]}, "": 1, "n": null, "big": 12345678901234567890}',
  );
  t.is(resolveJsonPointer(document, parseJsonPointer('/a/b~1c/1/~0d')), 20);
  t.is(resolveJsonPointer(document, parseJsonPointer('/a/b~1c/0')), 10);
  t.is(resolveJsonPointer(document, parseJsonPointer('/')), 1, '/ is the empty key');
  t.is(resolveJsonPointer(document, parseJsonPointer('/n')), null);
  t.is(resolveJsonPointer(document, parseJsonPointer('/missing')), undefined);
  t.is(resolveJsonPointer(document, parseJsonPointer('/a/b~1c/01')), undefined, 'no leading 0');
  t.is(resolveJsonPointer(document, parseJsonPointer('/a/b~1c/-')), undefined);
  t.is(resolveJsonPointer(document, parseJsonPointer('/big/value')), undefined);
  t.is(resolveJsonPointer(document, parseJsonPointer('/a/toString')), undefined, 'own keys only');
  t.is(resolveJsonPointer(document, parseJsonPointer('')), document);
  t.is(jsonPointerProblem('/a/b'), undefined);
  t.regex(jsonPointerProblem('a/b') ?? '', /starts with \//);
  t.regex(jsonPointerProblem('/a~2') ?? '', /~0 is ~/);
});
