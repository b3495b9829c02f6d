import test from 'ava';
import { parseListen } from '../src/listen-address.js';

test('--listen parses HOST:PORT and [IPv6]:PORT', (t) => {
  t.deepEqual(parseListen('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
  t.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 });
  t.deepEqual(parseListen('localhost:65535'), { host: 'localhost', port: 65535 });
  t.is(parseListen('127.0.0.1'), null);
  t.is(parseListen('127.0.0.1:70000'), null);
  t.is(parseListen(':80'), null);
  t.is(parseListen('::1:80'), null, 'a bare IPv6 address needs brackets');
});
