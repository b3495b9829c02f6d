/**
 * The bad-input suite: well over 1,000 malformed requests, generated deterministically, sent to
 * a real `tagd start` process. Every answer must be a 4xx problem document (never 5xx, never
 * 2xx), no body may show a stack or a file path, and the daemon must still answer afterwards.
 *
 * Requests that break HTTP itself (a bad request line, a header without a colon, conflicting
 * lengths) are sent over a raw socket: Node's parser refuses most of them before they reach
 * the app, and the listener answers them as problem documents without `instance` (400, or 431
 * for headers over 16 KiB) and closes; CONNECT is closed without an answer because tagd has no
 * proxy. Those are counted apart and must never be 2xx or 5xx, nor a bare status.
 *
 * Two kinds of input this suite found answering 5xx (a body whose Content-Encoding does not
 * decode; methods the router does not know) were fixed and keep their own tests at the end.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import jwt from 'jsonwebtoken';
import { maxBodyBytes } from '../../src/api/json-bodies.js';
import { errorCodes } from '../../src/errors.js';
import { startApi } from '../helpers/api-harness.js';
import { repoRoot, startTagd, type TagdProcess } from '../helpers/tagd-process.js';

/** Seed of the generator: the same requests on every run. */
const seed = 0x7a6d_0001;
/** Requests in flight at once. */
const concurrency = 16;

const signInPath = '/api/v2/Users/Authenticate';
const twoFactorPath = '/api/v2/Users/Authenticate/TwoFactor';
const changePasswordPath = '/api/v2/Users/Current/ChangePassword';
const tagQuerySetPath = '/api/v2/TagQuerySet';
const samplePath = '/api/v2/Tags/Sample/Demo/Line1/Temperature';
const json = 'application/json';

/** mulberry32: a small seeded PRNG, enough to pick and mutate deterministically. */
function prng(state: number) {
  let s = state >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (max: number) => Math.floor(next() * max),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

/** One malformed request sent with node:http. */
interface BadRequest {
  category: string;
  name: string;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Send the body chunked, without Content-Length. */
  chunked?: boolean;
  /** Statuses this request may be answered with; all 4xx. */
  expect: readonly number[];
}

/** One request that breaks HTTP itself, written to a raw socket. */
interface RawRequest {
  name: string;
  bytes: Buffer;
}

/** What the API gives the suite to build requests with. */
interface Credentials {
  /** The admin's access token (every permission). */
  access: string;
  /** The admin's refresh token. */
  refresh: string;
  /** A preauth token voided by the password change. */
  voidedPreAuth: string;
  /** The daemon's JWT signing key, read from the state directory, to forge claims. */
  jwtKey: Buffer;
}

const wrongTypes: readonly unknown[] = [
  null,
  0,
  -1,
  3.5,
  1e308,
  true,
  false,
  [],
  ['a'],
  {},
  { a: 1 },
];

const validBinding = { source: 'Demo/Line1/**', store: 'Local' };
const loggedBinding = {
  source: 'Demo/Line1/**',
  store: 'Logged',
  timeRangeStart: 'now-1h',
  timeRangeStop: 'now',
  seriesMode: 'Aggregated',
  aggregationWindow: '5m',
  aggregationFunction: 'Avg',
};

/** A JSON route with a body of the right shape but values that cannot succeed. */
interface BodyRoute {
  name: string;
  path: string;
  /** Whether the route needs the access token. */
  auth: boolean;
  body: Record<string, unknown>;
}

const bodyRoutes: readonly BodyRoute[] = [
  { name: 'sign-in', path: signInPath, auth: false, body: { username: 'admin', password: 'x' } },
  {
    name: 'two-factor',
    path: twoFactorPath,
    auth: false,
    body: { preAuthToken: 'a.b.c', code: '123456' },
  },
  {
    name: 'change-password',
    path: changePasswordPath,
    auth: true,
    body: { currentPassword: 'not the password', newPassword: 'another long password' },
  },
  {
    name: 'tag-query-set',
    path: tagQuerySetPath,
    auth: true,
    body: { srcSetId: 'no-such-set', bindings: [validBinding] },
  },
];

/** Values that break each string field's own rules while staying strings. */
const badStrings: Record<string, readonly string[]> = {
  username: ['', 'u'.repeat(65)],
  password: ['', 'p'.repeat(1025)],
  preAuthToken: ['', 't'.repeat(4097)],
  code: ['', 'abcdef', '12345', '1234567', '12 456', '١٢٣٤٥٦'],
  currentPassword: ['', 'p'.repeat(1025)],
  newPassword: ['', 'p'.repeat(1025)],
  srcSetId: ['', 's'.repeat(129)],
  source: [
    '',
    'bad path',
    '/Demo',
    'Demo//Line1',
    'Demo/***',
    'a/'.repeat(17).concat('a'),
    '\u0000',
  ],
  store: ['', 'local', 'LOCAL', 'History'],
  timeRangeStart: ['', 'yesterday', 'now-', 'now-5y', '2026-13-01T00:00:00Z', 'n'.repeat(65)],
  timeRangeStop: ['', 'tomorrow', 'now+1h', '2026-01-01', 'n'.repeat(65)],
  seriesMode: ['', 'raw', 'Smoothed'],
  aggregationWindow: ['', '0s', 'P1Y', 'PT', 'forever', '-5m'],
  aggregationFunction: ['', 'avg', 'Median'],
};

function authHeaders(route: BodyRoute, credentials: Credentials): Record<string, string> {
  return route.auth ? { Authorization: `Bearer ${credentials.access}` } : {};
}

function jsonRequest(
  category: string,
  name: string,
  route: BodyRoute,
  credentials: Credentials,
  body: string | Buffer,
  expect: readonly number[],
  headers: Record<string, string> = {},
): BadRequest {
  return {
    category,
    name: `${route.name}: ${name}`,
    method: 'POST',
    path: route.path,
    headers: { 'Content-Type': json, ...authHeaders(route, credentials), ...headers },
    body,
    expect,
  };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Broken JSON: fixed corruptions, and seeded truncations and byte edits that never parse. */
function brokenJson(random: ReturnType<typeof prng>, credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  const corruptions = (text: string): [string, string][] => [
    ['trailing comma', `${text.slice(0, -1)},}`],
    ['single quotes', text.replaceAll('"', "'")],
    ['unquoted keys', text.replace(/"([A-Za-z]+)":/g, '$1:')],
    ['comment', `/* c */${text}`],
    ['line comment', `${text}// c`],
    ['NaN value', `${text.slice(0, -1)},"n":NaN}`],
    ['Infinity value', `${text.slice(0, -1)},"n":Infinity}`],
    ['undefined value', `${text.slice(0, -1)},"n":undefined}`],
    ['trailing garbage', `${text}x`],
    ['two documents', `${text}${text}`],
    ['double brace', `{${text}`],
    ['bad escape', `${text.slice(0, -1)},"n":"\\x41"}`],
    ['short unicode escape', `${text.slice(0, -1)},"n":"\\u12"}`],
    ['raw control character', `${text.slice(0, -1)},"n":"a\u0001b"}`],
    ['unterminated string', `${text.slice(0, -2)}`],
    ['hex number', `${text.slice(0, -1)},"n":0x10}`],
    ['leading zero', `${text.slice(0, -1)},"n":012}`],
    ['plus sign', `${text.slice(0, -1)},"n":+1}`],
    ['only a colon', ':'],
    ['only whitespace', ' \t\n'],
    ['lone closing brace', '}'],
    ['NUL bytes', '\u0000\u0000'],
    ['latin-1 bytes', '\u00ff\u00fe{'],
  ];
  for (const route of bodyRoutes) {
    const text = JSON.stringify(route.body);
    for (const [name, body] of corruptions(text)) {
      if (isJson(body)) throw new Error(`corruption '${name}' parses`);
      // Whitespace only parses as no body at all: validation refuses that.
      out.push(jsonRequest('broken JSON', name, route, credentials, body, [400]));
    }
    for (let n = 0; n < 20; n++) {
      const cut = 1 + random.int(text.length - 1);
      out.push(
        jsonRequest(
          'broken JSON',
          `truncated at ${cut}`,
          route,
          credentials,
          text.slice(0, cut),
          [400],
        ),
      );
    }
    for (let n = 0; n < 20; n++) {
      let mutated = text;
      do {
        const at = random.int(mutated.length);
        const edit = random.int(3);
        const char = random.pick(['{', '}', '[', ']', '"', ':', ',', '\\', 'x', '0']);
        mutated =
          edit === 0
            ? mutated.slice(0, at) + mutated.slice(at + 1)
            : edit === 1
              ? mutated.slice(0, at) + char + mutated.slice(at)
              : mutated.slice(0, at) + char + mutated.slice(at + 1);
      } while (isJson(mutated));
      out.push(jsonRequest('broken JSON', `byte edits ${n}`, route, credentials, mutated, [400]));
    }
    // Strict JSON: a top-level scalar is refused by the body parser.
    for (const scalar of ['null', '1', '"text"', 'true', '-0', '1e400']) {
      out.push(jsonRequest('broken JSON', `scalar ${scalar}`, route, credentials, scalar, [400]));
    }
    for (let n = 0; n < 3; n++) {
      out.push(
        jsonRequest(
          'broken JSON',
          `random bytes ${n}`,
          route,
          credentials,
          randomBytesOf(random),
          [400],
        ),
      );
    }
  }
  return out;
}

function randomBytesOf(random: ReturnType<typeof prng>): Buffer {
  const bytes = Buffer.alloc(16 + random.int(512));
  for (let i = 0; i < bytes.length; i++) bytes[i] = random.int(256);
  // A leading 0xff never starts valid JSON, whatever follows.
  bytes[0] = 0xff;
  return bytes;
}

/** Fields of a body, with a setter on a copy; bindings' fields are reached inside bindings[0]. */
function fieldsOf(route: BodyRoute): { name: string; set: (value: unknown) => unknown }[] {
  const fields = Object.keys(route.body).map((key) => ({
    name: key,
    set: (value: unknown) => ({ ...route.body, [key]: value }),
  }));
  if (route.name !== 'tag-query-set') return fields;
  const inBinding = (binding: Record<string, unknown>, key: string) => ({
    name: `bindings[0].${key}${binding === loggedBinding ? ' (Logged)' : ''}`,
    set: (value: unknown) => ({ ...route.body, bindings: [{ ...binding, [key]: value }] }),
  });
  return [
    ...fields,
    ...Object.keys(validBinding).map((key) => inBinding(validBinding, key)),
    ...Object.keys(loggedBinding).map((key) => inBinding(loggedBinding, key)),
  ];
}

/** Wrong types in every field, string rules broken, missing and extra keys, wrong nesting. */
function wrongShapes(credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  for (const route of bodyRoutes) {
    for (const field of fieldsOf(route)) {
      for (const value of wrongTypes) {
        out.push(
          jsonRequest(
            'wrong types',
            `${field.name} = ${JSON.stringify(value)}`,
            route,
            credentials,
            JSON.stringify(field.set(value)),
            [400],
          ),
        );
      }
      const key = field.name.replace(/^bindings\[0\]\./, '').replace(/ \(Logged\)$/, '');
      for (const value of badStrings[key] ?? []) {
        out.push(
          jsonRequest(
            'broken field rules',
            `${field.name} = ${JSON.stringify(value.slice(0, 20))}`,
            route,
            credentials,
            JSON.stringify(field.set(value)),
            [400],
          ),
        );
      }
      // srcSetId is optional: without it the body is a valid new set, not a malformed request.
      if (field.name !== 'srcSetId') {
        out.push(
          jsonRequest(
            'missing keys',
            `without ${field.name}`,
            route,
            credentials,
            JSON.stringify(field.set(undefined)),
            [400],
          ),
        );
      }
    }
    for (const extra of [
      'extra',
      'Username',
      'token',
      '',
      ' ',
      'k'.repeat(1000),
      '__proto__',
      'constructor',
      'prototype',
    ]) {
      const text = `${JSON.stringify(route.body).slice(0, -1)},${JSON.stringify(extra)}:{"polluted":true}}`;
      out.push(
        jsonRequest(
          'extra keys',
          `extra key '${extra.slice(0, 20)}'`,
          route,
          credentials,
          text,
          [400],
        ),
      );
    }
    const text = JSON.stringify(route.body);
    for (const [name, body] of [
      ['empty array', '[]'],
      ['array of the body', `[${text}]`],
      ['array of arrays', `[[${text}]]`],
      ['empty object', '{}'],
      ['object of the body', `{"body":${text}}`],
      [
        'duplicate key with a wrong type last',
        `${text.slice(0, -1)},${text.slice(1, text.indexOf(':'))}:5}`,
      ],
    ] as const) {
      out.push(jsonRequest('arrays for objects', name, route, credentials, body, [400]));
    }
  }
  const tagQuerySet = bodyRoutes[3] as BodyRoute;
  for (const [name, body] of [
    ['bindings is an object', { bindings: validBinding }],
    ['bindings holds arrays', { bindings: [[validBinding]] }],
    ['bindings holds strings', { bindings: ['Demo/Line1/**'] }],
    ['bindings is empty', { bindings: [] }],
    ['1,001 bindings', { bindings: Array.from({ length: 1001 }, () => validBinding) }],
    ['Local with a time range', { bindings: [{ ...validBinding, timeRangeStart: 'now-1h' }] }],
    ['Local aggregated', { bindings: [{ ...validBinding, seriesMode: 'Aggregated' }] }],
    [
      'Logged without a range',
      { bindings: [{ source: 'Demo/**', store: 'Logged', seriesMode: 'Raw' }] },
    ],
    [
      'Aggregated without a window',
      { bindings: [{ ...loggedBinding, aggregationWindow: undefined }] },
    ],
    ['Raw with a function', { bindings: [{ ...loggedBinding, seriesMode: 'Raw' }] }],
    [
      'stop before start',
      { bindings: [{ ...loggedBinding, timeRangeStart: 'now', timeRangeStop: 'now-1d' }] },
    ],
    ['extra key in a binding', { bindings: [{ ...validBinding, extra: 1 }] }],
    ['binding is null', { bindings: [null] }],
  ] as const) {
    out.push(
      jsonRequest(
        'arrays for objects',
        name,
        tagQuerySet,
        credentials,
        JSON.stringify(body),
        [400],
      ),
    );
  }
  return out;
}

/** Bodies over the 256 KiB cap (413), one exactly at it (400), and deep nesting (400). */
function sizeAndDepth(credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  const padded = (bytes: number) => {
    const prefix = '{"username":"';
    const suffix = '","password":"x"}';
    return `${prefix}${'a'.repeat(bytes - prefix.length - suffix.length)}${suffix}`;
  };
  for (const route of bodyRoutes) {
    const atCap = padded(maxBodyBytes);
    out.push(jsonRequest('huge bodies', 'exactly at the cap', route, credentials, atCap, [400]));
    for (const size of [maxBodyBytes + 1, 300_000, 1024 * 1024, 4 * 1024 * 1024]) {
      const body = padded(size);
      out.push(jsonRequest('huge bodies', `${size} bytes`, route, credentials, body, [413]));
      out.push({
        ...jsonRequest('huge bodies', `${size} bytes chunked`, route, credentials, body, [413]),
        chunked: true,
      });
    }
    out.push(
      jsonRequest(
        'huge bodies',
        'huge broken JSON',
        route,
        credentials,
        '{'.repeat(500_000),
        [413],
      ),
    );
    out.push(
      jsonRequest(
        'huge bodies',
        'gzip bomb (10 MB of spaces)',
        route,
        credentials,
        gzipSync(Buffer.alloc(10_000_000, 0x20)),
        [413],
        { 'Content-Encoding': 'gzip' },
      ),
    );
    const deep = 100_000;
    for (const [name, body, expect] of [
      ['100,000 unclosed [', '['.repeat(deep), 400],
      ['100,000 nested arrays', `${'['.repeat(deep)}${']'.repeat(deep)}`, 400],
      ['40,000 nested objects', `${'{"a":'.repeat(40_000)}1${'}'.repeat(40_000)}`, 400],
      [
        '100,000 nested arrays in a field',
        `{"username":${'['.repeat(deep)}${']'.repeat(deep)},"password":"x"}`,
        400,
      ],
      [
        '100,000 nested arrays in bindings',
        `{"bindings":[${'['.repeat(deep)}${']'.repeat(deep)}]}`,
        400,
      ],
      ['200,000 nested arrays (over the cap)', `${'['.repeat(200_000)}${']'.repeat(200_000)}`, 413],
    ] as const) {
      out.push(jsonRequest('deep nesting', name, route, credentials, body, [expect]));
    }
  }
  return out;
}

/** Bodies that are not JSON by their Content-Type (415), and odd JSON content types. */
function mediaTypes(credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  const notJson = [
    'text/plain',
    'text/html',
    'text/json',
    'application/xml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/octet-stream',
    'application/jsonx',
    'application/json-patch+json',
    'application/vnd.api+json',
    'application/csp-report',
    'image/png',
    'application',
    '*/*',
    'application/*',
  ];
  for (const route of bodyRoutes) {
    const body = JSON.stringify(route.body);
    for (const type of notJson) {
      out.push({
        ...jsonRequest('non-JSON media types', type, route, credentials, body, [415]),
        headers: { 'Content-Type': type, ...authHeaders(route, credentials) },
      });
    }
    out.push({
      ...jsonRequest('non-JSON media types', 'no Content-Type', route, credentials, body, [415]),
      headers: authHeaders(route, credentials),
    });
    out.push({
      ...jsonRequest('non-JSON media types', 'no body at all', route, credentials, '', [415]),
      headers: authHeaders(route, credentials),
    });
    out.push(
      // The charset parameter means nothing for JSON (RFC 8259: UTF-8); broken JSON stays broken.
      jsonRequest('non-JSON media types', 'unknown charset', route, credentials, '{"a":', [400], {
        'Content-Type': 'application/json; charset=klingon',
      }),
    );
    out.push(
      jsonRequest('non-JSON media types', 'unknown encoding', route, credentials, body, [415], {
        'Content-Encoding': 'snappy',
      }),
    );
    // Valid compression of broken JSON is a JSON error, not an encoding error.
    out.push(
      jsonRequest(
        'non-JSON media types',
        'gzip of broken JSON',
        route,
        credentials,
        gzipSync('{"a":'),
        [400],
        {
          'Content-Encoding': 'gzip',
        },
      ),
    );
  }
  return out;
}

/** Paths that match no route, or a route with an impossible parameter. */
function oddPaths(random: ReturnType<typeof prng>, credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  const segments = [
    '',
    '..',
    '../..',
    '%2e%2e',
    '%2e%2e%2f%2e%2e',
    '%2E%2E/%2E%2E/etc/passwd',
    '..%5c..%5c',
    '%00',
    'Demo%00/Line1',
    '%E0%A4%A',
    '%',
    '%%',
    '%zz',
    '%F0%9F%92%A9',
    'Demo//Line1/Temperature',
    '//',
    'Demo/Line1/Temperature/..',
    'Demo/Line1/Temperature%2F',
    'Demo/Line1/Temperature;x=1',
    'Demo%2FLine1%2FNope',
    'a'.repeat(300),
    `${'a/'.repeat(17)}a`,
    'b'.repeat(8000),
    'Demo\\Line1\\Temperature',
    '~root',
    '.env',
    '%C0%AE%C0%AE',
    '%EF%BB%BF',
    '%u002e',
  ];
  const templates: {
    template: string;
    withToken: readonly number[];
    withoutToken: readonly number[];
  }[] = [
    { template: '/api/v2/Tags/Sample/{}', withToken: [400, 404], withoutToken: [401] },
    // A segment holding a slash makes these paths match no route: 404 before any token check.
    { template: '/api/v2/DBC/{}/m/s', withToken: [400, 404], withoutToken: [401, 404] },
    { template: '/api/v2/DBC/c/{}/s', withToken: [400, 404], withoutToken: [401, 404] },
    { template: '/api/v2/TagQuerySet/Delta/{}', withToken: [400, 404], withoutToken: [401, 404] },
    { template: '/api/v2/{}/Sample/x', withToken: [404], withoutToken: [404] },
    { template: '/{}/api/v2/Tags/Sample/x', withToken: [404], withoutToken: [404] },
    { template: '/healthz/{}x', withToken: [404], withoutToken: [404] },
  ];
  for (const { template, withToken, withoutToken } of templates) {
    for (const segment of segments) {
      const path = template.replace('{}', segment);
      // An empty segment makes some templates a valid route or a different one: skip those.
      if (segment === '' && !template.includes('Sample/{}')) continue;
      out.push({
        category: 'odd paths',
        name: `${path.slice(0, 60)} with a token`,
        method: 'GET',
        path,
        headers: { Authorization: `Bearer ${credentials.access}` },
        expect: withToken,
      });
      out.push({
        category: 'odd paths',
        name: `${path.slice(0, 60)} without a token`,
        method: 'GET',
        path,
        headers: {},
        expect: withoutToken,
      });
    }
  }
  for (const path of [
    '//healthz',
    '/api/v2//Tags/Sample/Demo/Line1/Temperature',
    '/api/v2/../healthz',
    '/api/v2/%2e%2e/healthz',
    '/api/v3/Tags/Sample/Demo/Line1/Temperature',
    '/api/v2/Tags/Sample',
    '/api/v2/Tag',
    '/api/v2',
    '/api',
    '/favicon.ico',
    '/index.html',
    '/%',
    '/%00',
    '/%E0%A4%A',
    '/\u00e9t\u00e9',
    '/\u0442\u0435\u0433',
  ]) {
    out.push({
      category: 'odd paths',
      name: path,
      method: 'GET',
      path: encodeURI(path) === path || path.includes('%') ? path : encodeURI(path),
      headers: { Authorization: `Bearer ${credentials.access}` },
      expect: [404],
    });
  }
  // Random printable paths under the API prefix: none of them names a route.
  const alphabet = "abcXYZ019-_.~!$&'()*+,;=:@/%".split('');
  for (let n = 0; n < 60; n++) {
    let tail = '';
    const length = 1 + random.int(40);
    for (let i = 0; i < length; i++) tail += random.pick(alphabet);
    out.push({
      category: 'odd paths',
      name: `random /api/v2/Nope/${tail}`,
      method: 'GET',
      path: `/api/v2/Nope/${tail}`,
      headers: {},
      expect: [404],
    });
  }
  return out;
}

/** Methods a route does not have (405), or on paths that do not exist (404). */
function oddMethods(credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  const token = { Authorization: `Bearer ${credentials.access}` };
  const routes: [string, readonly string[]][] = [
    ['/healthz', ['POST', 'PUT', 'PATCH', 'DELETE']],
    [signInPath, ['GET', 'PUT', 'PATCH', 'DELETE']],
    [twoFactorPath, ['GET', 'PUT', 'PATCH', 'DELETE']],
    [changePasswordPath, ['GET', 'PUT', 'PATCH', 'DELETE']],
    ['/api/v2/Users/Refresh', ['POST', 'PUT', 'PATCH', 'DELETE']],
    [samplePath, ['POST', 'PUT', 'PATCH', 'DELETE']],
    [tagQuerySetPath, ['GET', 'PUT', 'PATCH', 'DELETE']],
    ['/api/v2/TagQuerySet/Delta/x', ['POST', 'PUT', 'PATCH', 'DELETE']],
    ['/api/v2/DBC/c/m/s', ['POST', 'PUT', 'PATCH', 'DELETE']],
  ];
  for (const [path, methods] of routes) {
    for (const method of methods) {
      for (const headers of [{}, token]) {
        out.push({
          category: 'odd methods',
          name: `${method} ${path}${headers === token ? ' with a token' : ''}`,
          method,
          path,
          headers: { ...headers, 'Content-Type': json },
          body: '{}',
          expect: [405],
        });
      }
    }
  }
  for (const method of ['PUT', 'PATCH', 'DELETE', 'POST']) {
    out.push({
      category: 'odd methods',
      name: `${method} on no route`,
      method,
      path: '/api/v2/Nope',
      headers: {},
      expect: [404],
    });
  }
  for (const path of [samplePath, '/api/v2/TagQuerySet/Delta/x', '/api/v2/DBC/c/m/s']) {
    out.push({
      category: 'odd methods',
      name: `HEAD ${path} without a token`,
      method: 'HEAD',
      path,
      headers: {},
      expect: [401],
    });
  }
  return out;
}

function base64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(
    'base64url',
  );
}

/** Authorization and Cookie headers that must all be 401 (or 403 for a CSRF failure). */
function badCredentials(random: ReturnType<typeof prng>, credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  const claims = jwt.decode(credentials.access) as Record<string, unknown>;
  const nowSeconds = Math.floor(Date.now() / 1000);
  // Signed by hand: jsonwebtoken refuses to sign some of these payloads (an exp that is a string).
  const sign = (
    payload: object | string,
    key: Buffer | string = credentials.jwtKey,
    algorithm: 'HS256' | 'HS384' | 'HS512' = 'HS256',
  ) => {
    const unsigned = `${base64url({ alg: algorithm, typ: 'JWT' })}.${base64url(payload)}`;
    const hash = `sha${algorithm.slice(2)}`;
    return `${unsigned}.${createHmac(hash, key).update(unsigned).digest('base64url')}`;
  };
  const forged: [string, string][] = [
    ['alg none', `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`],
    ['alg none with a signature', `${base64url({ alg: 'none' })}.${base64url(claims)}.c2ln`],
    ['alg NONE', `${base64url({ alg: 'NONE' })}.${base64url(claims)}.`],
    ['signed with another key', sign(claims, randomBytes(32))],
    ['signed with an empty-ish key', sign(claims, 'k')],
    ['HS512 with the real key', sign(claims, credentials.jwtKey, 'HS512')],
    ['HS384 with the real key', sign(claims, credentials.jwtKey, 'HS384')],
    ['RS256 header', `${base64url({ alg: 'RS256' })}.${base64url(claims)}.c2ln`],
    ['unknown typ', sign({ ...claims, typ: 'root' })],
    ['refresh typ', sign({ ...claims, typ: 'refresh' })],
    ['preauth typ', sign({ ...claims, typ: 'preauth', stage: 'twoFactor' })],
    ['service typ on a user account', sign({ ...claims, typ: 'service', exp: undefined })],
    ['stale token version', sign({ ...claims, ver: 999 })],
    ['token version as a string', sign({ ...claims, ver: String(claims.ver) })],
    ['unknown account', sign({ ...claims, sub: 'no-such-account' })],
    ['account __proto__', sign({ ...claims, sub: '__proto__' })],
    ['account constructor', sign({ ...claims, sub: 'constructor' })],
    ['sub as an object', sign({ ...claims, sub: { id: claims.sub } })],
    ['sub missing', sign({ ...claims, sub: undefined })],
    ['jti missing', sign({ ...claims, jti: undefined })],
    ['expired', sign({ ...claims, exp: nowSeconds - 60 })],
    ['exp as a string', sign({ ...claims, exp: 'tomorrow' })],
    ['not before the future', sign({ ...claims, nbf: nowSeconds + 3600 })],
    ['other issuer', sign({ ...claims, iss: 'evil' })],
    ['no issuer', sign({ ...claims, iss: undefined })],
    ['string payload', sign('just a string')],
    ['array payload', `${base64url({ alg: 'HS256' })}.${base64url([1, 2])}.c2ln`],
    ['payload not JSON', `${base64url({ alg: 'HS256' })}.${base64url('{{')}.c2ln`],
    ['header not JSON', `${base64url('{{')}.${base64url(claims)}.c2ln`],
    ['header not base64', `!!!.${base64url(claims)}.c2ln`],
    ['two parts', `${base64url({ alg: 'HS256' })}.${base64url(claims)}`],
    ['four parts', `${credentials.access}.x`],
    ['the refresh token', credentials.refresh],
    ['a voided preauth token', credentials.voidedPreAuth],
  ];
  for (let n = 0; n < 25; n++) {
    const cut = 1 + random.int(credentials.access.length - 1);
    forged.push([`truncated at ${cut}`, credentials.access.slice(0, cut)]);
  }
  for (let n = 0; n < 15; n++) {
    // Not the last character: its low bits are base64 padding, which a decoder may ignore.
    const at = random.int(credentials.access.length - 1);
    const original = credentials.access[at];
    let replacement = random.pick([...'ABCxyz019-_.']);
    while (replacement === original) replacement = random.pick([...'ABCxyz019-_']);
    forged.push([
      `character ${at} changed`,
      credentials.access.slice(0, at) + replacement + credentials.access.slice(at + 1),
    ]);
  }
  const schemes = [
    'Basic YWRtaW46eA==',
    'Basic',
    'Digest username="admin"',
    'Token abc',
    'Negotiate abc',
    'Bearer',
    'Bearer ',
    'Bearer \t',
    'Bearer a b',
    'Bearer ,',
    'Bearer null',
    'Bearer undefined',
    'Bearer [object Object]',
    `Bearer ${'a'.repeat(10_000)}`,
    'Bearer eyJ',
    'Bearer ...',
    `${credentials.access}`,
    `Bearer${credentials.access}`,
    `Bearer ${credentials.access} extra`,
    `Bearer ${credentials.access}, Bearer ${credentials.access}`,
    `Basic ${credentials.access}`,
    'bearer x.y.z',
    'BEARER x.y.z',
  ];
  const protectedGets = [samplePath, '/api/v2/TagQuerySet/Delta/x', '/api/v2/DBC/c/m/s'];
  for (const [name, token] of forged) {
    for (const path of protectedGets) {
      out.push({
        category: 'bad tokens',
        name: `${name} on ${path}`,
        method: 'GET',
        path,
        headers: { Authorization: `Bearer ${token}` },
        expect: [401],
      });
    }
    out.push({
      category: 'bad tokens',
      name: `${name} on TagQuerySet`,
      method: 'POST',
      path: tagQuerySetPath,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': json },
      body: JSON.stringify({ bindings: [validBinding] }),
      expect: [401],
    });
  }
  for (const scheme of schemes) {
    for (const path of [...protectedGets, '/api/v2/Users/Refresh']) {
      out.push({
        category: 'bad Authorization schemes',
        name: `'${scheme.slice(0, 30)}' on ${path}`,
        method: 'GET',
        path,
        headers: { Authorization: scheme },
        expect: [401],
      });
    }
  }
  for (const [name, cookie, expect] of [
    ['garbage session cookie', 'tagd_session=garbage', 401],
    ['empty session cookie', 'tagd_session=', 401],
    ['percent session cookie', 'tagd_session=%', 401],
    ['bad encoding session cookie', 'tagd_session=%E0%A4%A', 401],
    ['forged session cookie', `tagd_session=${forged[0]?.[1]}`, 401],
    ['cookie soup', '=;=;;;tagd_session', 401],
    ['huge cookie', `tagd_session=${'c'.repeat(12_000)}`, 401],
    ['refresh cookie on a data route', `tagd_refresh=${credentials.refresh}`, 401],
  ] as const) {
    out.push({
      category: 'bad cookies',
      name,
      method: 'GET',
      path: samplePath,
      headers: { Cookie: cookie },
      expect: [expect],
    });
  }
  for (const [name, headers] of [
    ['no CSRF header', {}],
    ['wrong CSRF header', { 'X-CSRF-Token': 'wrong' }],
    ['CSRF header of another length', { 'X-CSRF-Token': 'x'.repeat(100) }],
    ['CSRF header without cookie', { 'X-CSRF-Token': 'abc' }],
  ] as const) {
    out.push({
      category: 'bad cookies',
      name: `valid session, ${name}`,
      method: 'POST',
      path: tagQuerySetPath,
      headers: {
        Cookie: `tagd_session=${credentials.access}; tagd_csrf=abcdef`,
        'Content-Type': json,
        ...headers,
      },
      body: JSON.stringify({ bindings: [validBinding] }),
      expect: [403],
    });
  }
  for (const [name, cookie] of [
    ['garbage refresh cookie', 'tagd_refresh=garbage'],
    ['foreign-key token as the refresh cookie', `tagd_refresh=${forged[3]?.[1]}`],
    ['empty refresh cookie', 'tagd_refresh='],
  ] as const) {
    out.push({
      category: 'bad cookies',
      name,
      method: 'GET',
      path: '/api/v2/Users/Refresh',
      headers: { Cookie: cookie },
      expect: [401],
    });
  }
  return out;
}

/** Odd headers on requests that are otherwise refused (no token: 401). */
function oddHeaders(random: ReturnType<typeof prng>): BadRequest[] {
  const out: BadRequest[] = [];
  const many: Record<string, string> = {};
  for (let i = 0; i < 90; i++) many[`X-Header-${i}`] = `value ${i}`;
  const odd: [string, Record<string, string | string[]>][] = [
    ['a 12 KB header value', { 'X-Junk': 'j'.repeat(12_000) }],
    ['90 extra headers', many],
    ['empty Host', { Host: '' }],
    ['odd Host', { Host: 'evil.example:99999' }],
    ['unclosed IPv6 Host', { Host: '[::1' }],
    ['long Host', { Host: 'h'.repeat(2000) }],
    ['forwarded headers', { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': 'garbage, ,' }],
    ['Forwarded header', { Forwarded: 'for=;proto=gopher' }],
    ['odd Accept', { Accept: 'text/html;q=abc, */*;q=-1' }],
    ['odd Accept-Encoding', { 'Accept-Encoding': 'br;q=2, gzip;q=NaN, *;q=' }],
    ['odd Accept-Language', { 'Accept-Language': '*-*-*;q=1.5' }],
    ['odd Range', { Range: 'bytes=-1--2' }],
    ['If-None-Match garbage', { 'If-None-Match': '"a", W/, *' }],
    ['If-Modified-Since garbage', { 'If-Modified-Since': 'yesterday' }],
    ['two Authorization headers', { Authorization: ['Bearer a.b.c', 'Bearer d.e.f'] }],
    ['two Content-Type headers', { 'Content-Type': ['application/json', 'text/plain'] }],
    ['latin-1 header value', { 'X-Latin': 'caf\u00e9 \u00ff' }],
    ['Origin of another site', { Origin: 'https://evil.example' }],
    ['Origin null', { Origin: 'null' }],
    ['X-HTTP-Method-Override', { 'X-HTTP-Method-Override': 'DELETE' }],
    ['Upgrade to h2c', { Connection: 'Upgrade, HTTP2-Settings', Upgrade: 'h2c' }],
    ['TE trailers', { TE: 'trailers, deflate;q=0.5' }],
    ['Max-Forwards', { 'Max-Forwards': '-1' }],
    ['Cookie without a session', { Cookie: 'a=b; c=d' }],
  ];
  for (let n = 0; n < 20; n++) {
    const value = Array.from({ length: 1 + random.int(200) }, () =>
      String.fromCharCode(0x20 + random.int(0x5f)),
    ).join('');
    odd.push([`random header value ${n}`, { [`X-Random-${n}`]: value }]);
  }
  for (const [name, headers] of odd) {
    out.push({
      category: 'odd headers',
      name: `${name} on GET ${samplePath}`,
      method: 'GET',
      path: samplePath,
      headers,
      expect: [401],
    });
    out.push({
      category: 'odd headers',
      name: `${name} on POST TagQuerySet`,
      method: 'POST',
      path: tagQuerySetPath,
      headers: { 'Content-Type': json, ...headers },
      body: JSON.stringify({ bindings: [validBinding] }),
      expect: [401],
    });
  }
  return out;
}

/** Query strings that break a query schema (400), or junk on routes that refuse anyway (401). */
function badQueries(credentials: Credentials): BadRequest[] {
  const out: BadRequest[] = [];
  const badCookieQueries = [
    'useCookies=yes',
    'useCookies=TRUE',
    'useCookies=1',
    'useCookies=',
    'useCookies',
    'useCookies=true&useCookies=false',
    'useCookies=true&useCookies=true',
    'useCookies=%E0%A4%A',
    'useCookies=true%00',
    'useCookies=%74rue%20',
    `useCookies=${'t'.repeat(5000)}`,
  ];
  for (const route of bodyRoutes.slice(0, 3)) {
    for (const query of badCookieQueries) {
      out.push({
        category: 'bad query strings',
        name: `${route.name}?${query.slice(0, 40)}`,
        method: 'POST',
        path: `${route.path}?${query}`,
        headers: { 'Content-Type': json, ...authHeaders(route, credentials) },
        body: JSON.stringify(route.body),
        expect: [400],
      });
    }
  }
  const junk = [
    '%',
    'a=%E0%A4%A',
    '__proto__=x',
    '__proto__[polluted]=1',
    'constructor[prototype][polluted]=1',
    'a[b][c][d][e]=f',
    '=&=&&',
    'a=1&'.repeat(2000),
    `q=${'%41'.repeat(3000)}`,
    'a=\u00e9',
  ];
  for (const query of junk) {
    for (const path of [samplePath, '/api/v2/TagQuerySet/Delta/x']) {
      out.push({
        category: 'bad query strings',
        name: `${path}?${query.slice(0, 40)}`,
        method: 'GET',
        path: `${path}?${encodeURI(query) === query ? query : query.replace('\u00e9', '%C3%A9')}`,
        headers: {},
        expect: [401],
      });
    }
  }
  return out;
}

/** Everything sent through node:http, in a fixed order. */
function badRequests(credentials: Credentials): BadRequest[] {
  const random = prng(seed);
  return [
    ...brokenJson(random, credentials),
    ...wrongShapes(credentials),
    ...sizeAndDepth(credentials),
    ...mediaTypes(credentials),
    ...oddPaths(random, credentials),
    ...oddMethods(credentials),
    ...badCredentials(random, credentials),
    ...oddHeaders(random),
    ...badQueries(credentials),
  ];
}

/** Requests that break HTTP itself; a request that reaches the app lacks a token (401). */
function rawRequests(): RawRequest[] {
  const target = samplePath;
  const texts: [string, string][] = [
    ['garbage request line', 'GARBAGE\r\n\r\n'],
    ['method only', 'GET\r\n\r\n'],
    ['HTTP/9.9', `GET ${target} HTTP/9.9\r\nHost: x\r\n\r\n`],
    ['lowercase method', `get ${target} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['unknown method', `FOO ${target} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['header without colon', `GET ${target} HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n`],
    ['space in header name', `GET ${target} HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n`],
    ['NUL in header value', `GET ${target} HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n`],
    ['bare CR in header value', `GET ${target} HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n`],
    ['20 KB header', `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['20 KB path', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    [
      'Content-Length and Transfer-Encoding',
      `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
    [
      'two Content-Lengths',
      `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd`,
    ],
    ['negative Content-Length', `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n`],
    ['Content-Length abc', `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`],
    [
      'Content-Length overflow',
      `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n`,
    ],
    [
      'bad chunk size',
      `POST ${target} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`,
    ],
    [
      'huge chunk extension',
      `POST ${target} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(20_000)}\r\na\r\n0\r\n\r\n`,
    ],
    [
      'Transfer-Encoding gzip',
      `POST ${target} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc`,
    ],
    ['no Host', `GET ${target} HTTP/1.1\r\n\r\n`],
    ['bare LF', `GET ${target} HTTP/1.1\nHost: x\n\n`],
    ['obsolete line folding', `GET ${target} HTTP/1.1\r\nHost: x\r\nX: a\r\n  b\r\n\r\n`],
    ['space in path', `GET /a b HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['tab in path', `GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['empty request', '\r\n\r\nGET\r\n\r\n'],
    ['pipelined garbage', `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n`],
    ['CONNECT', 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n'],
    // These parse: they reach the app, which refuses them for want of a token.
    ['HTTP/1.0 without Host', `GET ${target} HTTP/1.0\r\n\r\n`],
    [
      'two Host headers',
      `GET ${target} HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n`,
    ],
    [
      'absolute-form to another host',
      `GET http://other.example${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    ],
    ['asterisk-form GET', 'GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    [
      'websocket upgrade',
      `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    ],
    [
      'Expect: bogus',
      `POST ${tagQuerySetPath} HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    ],
  ];
  const requests = texts.map(([name, text]) => ({ name, bytes: Buffer.from(text, 'latin1') }));
  requests.push(
    {
      name: 'TLS ClientHello on the HTTP port',
      bytes: Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x03]),
    },
    {
      name: 'non-ASCII bytes in the path',
      bytes: Buffer.concat([
        Buffer.from(`GET ${target}`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
    },
  );
  return requests;
}

/** An answer as received. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Sends one request. Bodies are always framed (Content-Length, or chunked when asked): Node's
 * client sends a GET or DELETE body unframed otherwise, which the server rightly reads as the
 * next request.
 */
async function send(agent: Agent, origin: URL, bad: BadRequest): Promise<Answer> {
  try {
    return await sendOnce(agent, origin, bad);
  } catch (error) {
    // Node's documented keep-alive race: the server closed an idle socket just as the agent
    // reused it. The request never reached the server, so it is sent again on a new socket.
    if ((error as { reusedSocket?: boolean }).reusedSocket) {
      return sendOnce(undefined, origin, bad);
    }
    throw error;
  }
}

function sendOnce(agent: Agent | undefined, origin: URL, bad: BadRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const framing: Record<string, string> =
      bad.body === undefined
        ? {}
        : bad.chunked
          ? { 'Transfer-Encoding': 'chunked' }
          : { 'Content-Length': String(Buffer.byteLength(bad.body)) };
    const outgoing = request(
      {
        host: origin.hostname,
        port: origin.port,
        method: bad.method,
        path: bad.path,
        headers: { ...bad.headers, ...framing },
        agent: agent ?? false,
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    // The server may answer 413 and close before a huge body is written: that is an answer.
    outgoing.on('error', (error) => {
      if (answered) return;
      const reused = outgoing.reusedSocket && (error as { code?: string }).code === 'ECONNRESET';
      reject(Object.assign(error, { reusedSocket: reused }));
    });
    void writeBody(outgoing, bad.body, () => answered);
  });
}

/** Size of the slices a body is written in. */
const sliceBytes = 64 * 1024;

/**
 * Writes a body in slices, as fast as the connection takes them, and stops once the server has
 * answered. A body over the limit is refused while it is still arriving: the server reads and
 * drops the rest (its lingering close), so the client reads the 413 and not a reset.
 */
async function writeBody(
  outgoing: ReturnType<typeof request>,
  body: string | Buffer | undefined,
  answered: () => boolean,
): Promise<void> {
  if (body === undefined) {
    outgoing.end();
    return;
  }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  for (let offset = 0; offset < bytes.length; offset += sliceBytes) {
    if (answered() || outgoing.destroyed) return;
    const slice = bytes.subarray(offset, offset + sliceBytes);
    await new Promise<void>((resolve) => outgoing.write(slice, () => resolve()));
  }
  if (!answered() && !outgoing.destroyed) outgoing.end();
}

/** What a raw request got: an HTTP answer, or the socket closed without one. */
type RawAnswer = { kind: 'answer'; answer: Answer } | { kind: 'closed' };

function sendRaw(origin: URL, raw: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(origin.port), origin.hostname);
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (result: RawAnswer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const timer = setTimeout(
      () => finish(new Error(`no complete answer within 5 s: ${received.toString('latin1')}`)),
      5_000,
    );
    const tryParse = (closed: boolean) => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) {
        if (closed) finish(received.length === 0 ? { kind: 'closed' } : new Error(text));
        return;
      }
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const rest = received.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
      let body: string | undefined;
      if (headers['content-length'] !== undefined) {
        const length = Number(headers['content-length']);
        if (rest.length >= length) body = rest.subarray(0, length).toString('utf8');
      } else if (headers['transfer-encoding'] === 'chunked') {
        const restText = rest.toString('utf8');
        if (restText.endsWith('0\r\n\r\n')) body = decodeChunked(restText);
      } else if (closed) body = rest.toString('utf8');
      if (body === undefined) {
        if (closed) finish(new Error(`truncated answer: ${text}`));
        return;
      }
      finish({
        kind: 'answer',
        answer: { status: Number(statusLine.split(' ')[1]), headers, body },
      });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    socket.on('close', () => tryParse(true));
    socket.on('error', () => tryParse(true));
    socket.write(raw.bytes);
  });
}

function decodeChunked(text: string): string {
  let body = '';
  let rest = text;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, lineEnd), 16);
    if (!size) return body;
    body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>) {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

/** Stack frames, source paths and internals a client must never see. */
function leaks(body: string, stateDir: string): string[] {
  const found: string[] = [];
  const needles = [repoRoot, stateDir, '/work/', 'node_modules', 'file://', 'Error:'];
  for (const needle of needles) if (body.includes(needle)) found.push(needle);
  if (/\n\s+at |\bat [\w.<>]+ \(|\.(ts|js|mjs):\d+/.test(body)) found.push('stack frame');
  return found;
}

/** Why an answer is not an acceptable problem document; undefined when it is. */
function problemFault(
  answer: Answer,
  method: string,
  stateDir: string,
  beforeRouting = false,
): string | undefined {
  if (answer.status < 400 || answer.status > 499) return `status ${answer.status}`;
  const type = String(answer.headers['content-type'] ?? '');
  if (!type.startsWith('application/problem+json')) return `content-type '${type}'`;
  if (method === 'HEAD') return answer.body === '' ? undefined : 'a HEAD answer with a body';
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(answer.body);
  } catch {
    return 'body is not JSON';
  }
  if (problem.status !== answer.status) return `problem status ${String(problem.status)}`;
  const code = problem.code;
  if (typeof code !== 'string' || code === '') return 'no code';
  const known = (errorCodes as Record<string, { status: number }>)[code];
  if (known === undefined) return `code '${code}' is not in errorCodes`;
  if (known.status !== answer.status) return `code '${code}' is documented as ${known.status}`;
  if (problem.type !== `urn:tagd:problem:${code}`) return `type '${String(problem.type)}'`;
  // Refused by the listener before any route read a path: no instance, and the socket closes.
  const fields = beforeRouting
    ? (['title', 'detail'] as const)
    : (['title', 'detail', 'instance'] as const);
  for (const field of fields) {
    if (typeof problem[field] !== 'string') return `no ${field}`;
  }
  if (beforeRouting && answer.headers.connection !== 'close') return 'no Connection: close';
  const leaked = leaks(answer.body, stateDir);
  if (leaked.length > 0) return `body shows ${leaked.join(', ')}`;
  return undefined;
}

/**
 * Statuses of what Node's own HTTP parser refuses before the app sees anything; the listener
 * answers them as problem documents without `instance` (src/api/server-lifecycle.ts).
 */
const nodeStatuses = new Set([400, 408, 413, 414, 417, 431]);

/** Signs in as the initial admin and completes the required password change. */
async function adminCredentials(baseUrl: string, stateDir: string): Promise<Credentials> {
  const password = (await readFile(join(stateDir, 'initial-admin-password'), 'utf8')).trim();
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': json, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const parsed = (await response.json()) as Record<string, string>;
    if (response.status !== 200) throw new Error(`${path}: ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const first = await post(signInPath, { username: 'admin', password });
  const changed = await post(
    changePasswordPath,
    { currentPassword: password, newPassword: 'a much longer password 1' },
    first.preAuthToken,
  );
  return {
    access: changed.token as string,
    refresh: changed.refreshToken as string,
    voidedPreAuth: first.preAuthToken as string,
    jwtKey: await readFile(join(stateDir, 'jwt.key')),
  };
}

async function startDaemon(stateDir: string): Promise<{ tagd: TagdProcess; baseUrl: string }> {
  const tagd = startTagd(
    ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
    {
      env: { TAGD_STATE_DIR: stateDir },
    },
  );
  try {
    const ready = await tagd.waitForLog('tagd ready');
    return { tagd, baseUrl: String(ready.url) };
  } catch (error) {
    tagd.child.kill('SIGKILL');
    throw error;
  }
}

test('over 1,000 malformed requests get 4xx problem documents and the daemon lives on', async (t) => {
  t.timeout(180_000);
  const stateDir = await mkdtemp(join(tmpdir(), 'tagd-bad-input-'));
  const { tagd, baseUrl } = await startDaemon(stateDir);
  t.teardown(async () => {
    if (tagd.child.exitCode === null) {
      tagd.child.kill('SIGTERM');
      await tagd.exited;
    }
    await rm(stateDir, { recursive: true, force: true });
  });
  const credentials = await adminCredentials(baseUrl, stateDir);
  const origin = new URL(baseUrl);

  const requests = badRequests(credentials);
  const raws = rawRequests();
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  t.teardown(() => agent.destroy());

  const faults: string[] = [];
  const perCategory = new Map<string, number>();
  const answers = await pool(requests, concurrency, async (bad) => {
    try {
      return await send(agent, origin, bad);
    } catch (error) {
      return error as Error;
    }
  });
  requests.forEach((bad, index) => {
    perCategory.set(bad.category, (perCategory.get(bad.category) ?? 0) + 1);
    const answer = answers[index] as Answer | Error;
    const label = `[${bad.category}] ${bad.method} ${bad.path.slice(0, 80)} (${bad.name})`;
    if (answer instanceof Error) {
      faults.push(`${label}: no answer (${answer.message})`);
      return;
    }
    const fault = problemFault(answer, bad.method, stateDir);
    if (fault !== undefined) faults.push(`${label}: ${fault}: ${answer.body.slice(0, 200)}`);
    else if (!bad.expect.includes(answer.status)) {
      faults.push(`${label}: ${answer.status}, expected ${bad.expect.join(' or ')}`);
    }
  });

  const rawCounts = { node: 0, app: 0, closed: 0 };
  const rawAnswers = await pool(raws, concurrency, async (raw) => {
    try {
      return await sendRaw(origin, raw);
    } catch (error) {
      return error as Error;
    }
  });
  raws.forEach((raw, index) => {
    const result = rawAnswers[index] as RawAnswer | Error;
    const label = `[raw] ${raw.name}`;
    if (result instanceof Error) {
      faults.push(`${label}: ${result.message.slice(0, 200)}`);
      return;
    }
    if (result.kind === 'closed') {
      // Only CONNECT is expected to be dropped: tagd has no 'connect' handler, so Node closes.
      if (raw.name === 'CONNECT') rawCounts.closed++;
      else faults.push(`${label}: closed without an answer`);
      return;
    }
    const { answer } = result;
    if (answer.body === '' && !answer.headers['content-type']) {
      faults.push(`${label}: bare ${answer.status} without a problem document`);
      return;
    }
    if (!answer.body.includes('"instance"') && nodeStatuses.has(answer.status)) {
      // Node's parser refused it before the app; the listener answered it.
      rawCounts.node++;
      const fault = problemFault(answer, 'GET', stateDir, true);
      if (fault !== undefined) faults.push(`${label}: ${fault}: ${answer.body.slice(0, 200)}`);
      return;
    }
    rawCounts.app++;
    const fault = problemFault(answer, 'GET', stateDir);
    if (fault !== undefined) faults.push(`${label}: ${fault}: ${answer.body.slice(0, 200)}`);
  });

  t.log(
    `${requests.length} requests through node:http: ${[...perCategory]
      .map(([category, count]) => `${category} ${count}`)
      .join(', ')}`,
  );
  t.log(
    `${raws.length} raw-socket requests: ${rawCounts.node} refused by Node's parser (a problem ` +
      `document without instance), ${rawCounts.app} reached the app, ${rawCounts.closed} closed without an answer (CONNECT)`,
  );
  t.true(requests.length + raws.length >= 1_000, `only ${requests.length + raws.length} requests`);
  t.deepEqual(faults, [], `${faults.length} requests were not answered as required`);
  t.is(rawCounts.closed, 1);
  t.true(rawCounts.node >= 20, `${rawCounts.node} raw requests refused by Node`);
  t.true(rawCounts.app >= 5, `${rawCounts.app} raw requests reached the app`);

  // Still alive, still serving, and the admin's session survived the barrage.
  t.is(tagd.child.exitCode, null, 'the daemon is running');
  const health = await fetch(`${baseUrl}/healthz`);
  t.is(health.status, 200);
  const sample = await fetch(`${baseUrl}${samplePath}`, {
    headers: { Authorization: `Bearer ${credentials.access}` },
  });
  t.is(sample.status, 200);
  t.is(((await sample.json()) as { fullTagId: string }).fullTagId, 'Demo/Line1/Temperature');

  const severe = tagd
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; component?: string })
    // The demo publisher has no receiver here: its failed deliveries are expected, and not
    // about request handling.
    .filter((line) => line.component !== 'webhook')
    .filter((line) => line.level >= 50 || /uncaught|unhandled/i.test(line.msg));
  t.deepEqual(severe, [], 'no error or fatal line in the log');
  t.is(tagd.stderr(), '', 'nothing on stderr');
});

test('a body whose Content-Encoding does not decode is a 400, not a 500', async (t) => {
  const api = await startApi(t);
  const statuses: number[] = [];
  for (const [encoding, body] of [
    ['gzip', Buffer.from('{"username":"a","password":"b"}')],
    ['deflate', Buffer.from('not deflate')],
    ['br', Buffer.from('not brotli')],
    ['gzip', gzipSync('{"username":"a","password":"b"}').subarray(0, 12)],
  ] as const) {
    const response = await fetch(`${api.baseUrl}${signInPath}`, {
      method: 'POST',
      headers: { 'Content-Type': json, 'Content-Encoding': encoding },
      body,
    });
    statuses.push(response.status);
  }
  t.deepEqual(statuses, [400, 400, 400, 400]);
});

test('a method the API does not know is a 501 problem with its own code (RFC 9110 §15.6.2)', async (t) => {
  const api = await startApi(t);
  const answers: { status: number; code: unknown }[] = [];
  for (const method of ['PROPFIND', 'SEARCH', 'MKCOL', 'LOCK', 'PURGE']) {
    const answer = await new Promise<Answer>((resolve, reject) => {
      const outgoing = request(`${api.baseUrl}/healthz`, { method }, (response) => {
        let body = '';
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    answers.push({ status: answer.status, code: JSON.parse(answer.body).code });
  }
  t.deepEqual(
    answers,
    Array.from({ length: 5 }, () => ({ status: 501, code: 'not-implemented' })),
  );
});
