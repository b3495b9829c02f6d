import test from 'ava';
import {
  maskPassword,
  maskPostgresUrl,
  postgresUrlPassword,
} from '../../src/history/postgres-url.js';

test('maskPostgresUrl hides the password in the user info and in a password parameter', (t) => {
  t.is(
    maskPostgresUrl('postgres://tagd:s3cr%40t@db.plant:5432/history?sslmode=require'),
    'postgres://tagd:********@db.plant:5432/history?sslmode=require',
  );
  t.is(maskPostgresUrl('postgresql://tagd@db/history'), 'postgresql://tagd@db/history');
  t.is(
    maskPostgresUrl('postgres://db/history?user=tagd&password=hunter22'),
    'postgres://db/history?user=tagd&password=********',
  );
  // Not a URL the WHATWG parser takes: masked by pattern.
  t.is(maskPostgresUrl('postgres://tagd:a b@[bad/x'), 'postgres://tagd:********@[bad/x');
});

test('maskPassword removes the password in raw and encoded form from any text', (t) => {
  const url = 'postgres://tagd:p%40ss%2Fword@db/h';
  t.is(postgresUrlPassword(url), 'p@ss/word');
  t.is(
    maskPassword(`failed for ${url}: bad p@ss/word or p%40ss%2Fword`, url),
    'failed for postgres://tagd:********@db/h: bad ******** or ********',
  );
  t.is(maskPassword('nothing secret', 'postgres://tagd@db/h'), 'nothing secret');
});

test('maskPassword masks the password as a whole token only, never inside words', (t) => {
  const url = 'postgres://tagd:ss@db/h';
  t.is(
    maskPassword('password authentication failed; ss was wrong', url),
    'password authentication failed; ******** was wrong',
  );
});
