import { readFile } from 'node:fs/promises';
import SwaggerParser from '@apidevtools/swagger-parser';
import test from 'ava';
import { z } from 'zod';
import { apiRoutes } from '../../src/api/app.js';
import {
  buildOpenApiDocument,
  type OpenApiDocument,
  openApiSnapshotText,
} from '../../src/api/openapi.js';
import { defineRoute } from '../../src/api/route.js';
import { buildRouter } from '../../src/api/router.js';
import { errorCodes } from '../../src/errors.js';
import { type ApiHarness, startApi } from '../helpers/api-harness.js';

const snapshotFile = new URL('./openapi.snapshot.json', import.meta.url);

async function servedDocument(api: ApiHarness): Promise<OpenApiDocument> {
  const response = await api.request('/swagger/v2/swagger.json');
  if (response.status !== 200) throw new Error(`document answered ${response.status}`);
  return response.body as OpenApiDocument;
}

/** `GET /api/v2/x/{id}` for every operation of the document. */
function documentOperations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();
}

test('the document is served without a token, as JSON, and is a valid OpenAPI 3.1 document', async (t) => {
  const api = await startApi(t, { deps: { version: '1.2.3' } });
  const response = await api.request('/swagger/v2/swagger.json');
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  const document = response.body as OpenApiDocument;
  t.is(document.openapi, '3.1.0');
  t.deepEqual(document.info.title, 'tagd API');
  t.is(document.info.version, '1.2.3');
  await t.notThrowsAsync(SwaggerParser.validate(structuredClone(document) as never));
  // Built once per app: a second request answers the same object's serialization.
  t.deepEqual(await servedDocument(api), document);
});

test('the document equals the committed snapshot', async (t) => {
  const api = await startApi(t);
  const actual = openApiSnapshotText(await servedDocument(api));
  const expected = await readFile(snapshotFile, 'utf8');
  if (actual === expected) {
    t.pass();
    return;
  }
  const actualLines = actual.split('\n');
  const expectedLines = expected.split('\n');
  const first = actualLines.findIndex((line, index) => line !== expectedLines[index]);
  const around = (lines: string[]) =>
    lines.slice(Math.max(0, first - 3), first + 4).join('\n') || '(end of file)';
  t.fail(
    'The OpenAPI document differs from test/api/openapi.snapshot.json. If the change to the ' +
      'routes or models is intended, run `npm run openapi:snapshot` and review the diff ' +
      `(git diff test/api/openapi.snapshot.json) before committing.\n\nFirst difference, line ${
        first + 1
      }:\n--- snapshot\n${around(expectedLines)}\n+++ served\n${around(actualLines)}`,
  );
});

test('every router route is in the document, and every documented operation is routed', async (t) => {
  const api = await startApi(t);
  const document = await servedDocument(api);
  const router = buildRouter(apiRoutes(api.deps), api.accounts);
  const routed = router.stack
    .flatMap((layer) =>
      layer.methods
        .filter((method) => method !== 'HEAD')
        .map((method) => `${method} ${openApiPathOf(layer.path)}`),
    )
    .sort();
  t.true(routed.length >= 14, `only ${routed.length} routes`);
  t.deepEqual(routed, documentOperations(document));
  t.true(routed.includes('GET /api/v2/Tags/Sample/{fullTagPath}'));
  t.true(routed.includes('GET /swagger/v2/swagger.json'));
  t.true(routed.includes('GET /swagger'));
  t.true(routed.includes('GET /healthz'));
});

/** koa-router syntax back to OpenAPI: `:name` and `{*name}` → `{name}`. */
function openApiPathOf(path: string | RegExp): string {
  return String(path)
    .replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    .replace(/\{\*([A-Za-z0-9_]+)\}/g, '{$1}');
}

test('the Problem schema lists exactly the error codes tagd can answer', async (t) => {
  const api = await startApi(t);
  const document = await servedDocument(api);
  const problem = document.components.schemas.Problem as {
    properties: { code: { enum: string[]; description: string } };
    required: string[];
  };
  t.deepEqual(problem.properties.code.enum, Object.keys(errorCodes));
  for (const [code, { status, meaning }] of Object.entries(errorCodes)) {
    t.true(
      problem.properties.code.description.includes(`- \`${code}\` (${status}): ${meaning}`),
      code,
    );
  }
  t.deepEqual(problem.required, ['type', 'title', 'status', 'detail', 'instance', 'code']);
});

test('operations carry their parameters, body, security and problem responses', async (t) => {
  const api = await startApi(t);
  const document = await servedDocument(api);
  const sample = document.paths['/api/v2/Tags/Sample/{fullTagPath}']?.get;
  t.truthy(sample);
  if (!sample) return;
  t.is(sample.operationId, 'getTagSample');
  t.deepEqual(sample.tags, ['Tags']);
  t.deepEqual(sample.security, [{ bearerAuth: [] }, { cookieAuth: [] }]);
  t.deepEqual(sample.parameters, [
    {
      name: 'fullTagPath',
      in: 'path',
      required: true,
      description: 'Tag path; its slashes may be literal or encoded as %2F.',
      schema: { type: 'string', minLength: 1 },
    },
  ]);
  t.deepEqual(Object.keys(sample.responses), ['200', '400', '401', '403', '404']);
  t.deepEqual(sample.responses['200'], {
    description: 'The latest sample.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/TagSample' } } },
  });
  t.deepEqual(sample.responses['403'], {
    description:
      'The account lacks the permission (`forbidden`), or a cookie session did not send the CSRF header (`csrf-failed`).',
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  });
  t.is(
    (sample.responses['401'] as { headers?: Record<string, unknown> }).headers?.[
      'WWW-Authenticate'
    ] !== undefined,
    true,
  );

  const signIn = document.paths['/api/v2/Users/Authenticate']?.post;
  t.truthy(signIn);
  if (!signIn) return;
  t.is(signIn.security, undefined, 'public: no security requirement');
  t.deepEqual(signIn.requestBody, {
    required: true,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/SignInRequest' } } },
  });
  // A body adds 400, 413 and 415; a listed 429 comes with Retry-After.
  t.deepEqual(Object.keys(signIn.responses), ['200', '400', '401', '413', '415', '429']);
  t.truthy(
    (signIn.responses['429'] as { headers?: Record<string, unknown> }).headers?.['Retry-After'],
  );
  t.deepEqual(signIn.parameters?.[0], {
    name: 'useCookies',
    in: 'query',
    required: false,
    description: 'true: a browser session in HttpOnly cookies; the body carries no token.',
    schema: { type: 'string', enum: ['true', 'false'] },
  });

  t.deepEqual(document.components.securitySchemes.bearerAuth, {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An access token from `POST /api/v2/Users/Authenticate`, or a service account token from `tagd tokens generate NAME`.',
  });
  t.like(document.components.securitySchemes.cookieAuth, {
    type: 'apiKey',
    in: 'cookie',
    name: 'tagd_session',
  });
  t.regex(document.info.description, /401/);
  t.regex(document.info.description, /403/);
  t.regex(document.info.description, /tagd tokens generate NAME/);
});

test('every $ref points at a component, and every component is used', async (t) => {
  const api = await startApi(t);
  const document = await servedDocument(api);
  const refs = new Set(
    [...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]),
  );
  const components = Object.keys(document.components.schemas).map(
    (name) => `#/components/schemas/${name}`,
  );
  t.deepEqual([...refs].sort(), [...components].sort());
  t.false(JSON.stringify(document).includes('$defs'));
});

test('the Swagger UI page and its files are served offline, with a CSP that allows no inline script', async (t) => {
  const api = await startApi(t);
  const page = await fetch(`${api.baseUrl}/swagger`);
  t.is(page.status, 200);
  t.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self';/);
  t.false(csp.includes('unsafe'), 'no unsafe-inline, no unsafe-eval');
  const html = await page.text();
  // Every script is a same-origin file: no inline code, no external host.
  t.deepEqual(
    [...html.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)].map((match) => [
      match[1]?.trim(),
      match[2],
    ]),
    [
      ['src="/swagger/swagger-ui-bundle.js"', ''],
      ['src="/swagger/swagger-initializer.js"', ''],
    ],
  );
  t.false(/https?:\/\//.test(html));

  for (const [path, type] of [
    ['/swagger/swagger-ui.css', 'text/css; charset=utf-8'],
    ['/swagger/swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
    ['/swagger/swagger-initializer.js', 'application/javascript; charset=utf-8'],
  ] as const) {
    const response = await fetch(`${api.baseUrl}${path}`);
    t.is(response.status, 200, path);
    t.is(response.headers.get('content-type'), type, path);
    t.true((await response.arrayBuffer()).byteLength > 100, path);
    const etag = response.headers.get('etag');
    t.truthy(etag, path);
    // fetch would add `Cache-Control: no-cache` to a conditional request, which forbids a 304.
    const again = await fetch(`${api.baseUrl}${path}`, {
      headers: { 'If-None-Match': etag ?? '', 'Cache-Control': 'max-age=0' },
    });
    t.is(again.status, 304, path);
  }
  // The API's own responses keep the strict policy.
  const other = await fetch(`${api.baseUrl}/swagger/v2/swagger.json`);
  t.is(other.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors 'none'");
  // No other file of the package, and no way out of it.
  for (const path of [
    '/swagger/index.html',
    '/swagger/package.json',
    '/swagger/..%2F..%2Fpackage.json',
    '/swagger/../package.json',
  ]) {
    const response = await fetch(`${api.baseUrl}${path}`);
    t.is(response.status, 404, path);
  }
});

function echoRoute(body: z.ZodType, response: z.ZodType, path = '/echo') {
  return defineRoute({
    method: 'post',
    path,
    operationId: path.slice(1),
    tag: 'Test',
    summary: 'Echo',
    access: { kind: 'token', types: ['access'] },
    body,
    responses: { 201: { description: 'Echoed.', schema: response } },
    problems: [],
    handle: () => undefined,
  });
}

test('a component sent and answered gets a separate Input form when the two differ', (t) => {
  const part = z.object({ name: z.string() }).meta({ id: 'TestPart' });
  const whole = z.object({ part, size: z.number().default(1) }).meta({ id: 'TestWhole' });
  const document = buildOpenApiDocument([echoRoute(whole, whole)], '1.0.0');
  const operation = document.paths['/echo']?.post;
  t.deepEqual(operation?.requestBody, {
    required: true,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/TestWholeInput' } } },
  });
  t.deepEqual(operation?.responses['201'], {
    description: 'Echoed.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/TestWhole' } } },
  });
  // A token route with a body: 400/413/415 from the body, 401 from the token, 403 for CSRF.
  t.deepEqual(Object.keys(operation?.responses ?? {}), ['201', '400', '401', '403', '413', '415']);
  const { schemas } = document.components;
  t.deepEqual(Object.keys(schemas), [
    'Problem',
    'TestPart',
    'TestPartInput',
    'TestWhole',
    'TestWholeInput',
  ]);
  // Input: unknown keys accepted, a defaulted field optional; output: closed, always present.
  t.deepEqual(schemas.TestWholeInput, {
    type: 'object',
    properties: {
      part: { $ref: '#/components/schemas/TestPartInput' },
      size: { default: 1, type: 'number' },
    },
    required: ['part'],
  });
  t.deepEqual(schemas.TestWhole, {
    type: 'object',
    properties: {
      part: { $ref: '#/components/schemas/TestPart' },
      size: { default: 1, type: 'number' },
    },
    required: ['part', 'size'],
    additionalProperties: false,
  });
});

test('a component whose only difference is a component it refers to also gets an Input form', (t) => {
  const inner = z.object({ name: z.string() }).meta({ id: 'TestInner' });
  const outer = z.strictObject({ inner }).meta({ id: 'TestOuter' });
  const { schemas } = buildOpenApiDocument([echoRoute(outer, outer)], '1.0.0').components;
  t.deepEqual(schemas.TestOuterInput, {
    type: 'object',
    properties: { inner: { $ref: '#/components/schemas/TestInnerInput' } },
    required: ['inner'],
    additionalProperties: false,
  });
  t.deepEqual(schemas.TestOuter, {
    type: 'object',
    properties: { inner: { $ref: '#/components/schemas/TestInner' } },
    required: ['inner'],
    additionalProperties: false,
  });
});

test('a component used the same way in both directions is one component', (t) => {
  const name = z.enum(['a', 'b']).meta({ id: 'TestName' });
  const document = buildOpenApiDocument(
    [echoRoute(z.strictObject({ name }), z.strictObject({ name }))],
    '1.0.0',
  );
  t.deepEqual(Object.keys(document.components.schemas), ['Problem', 'TestName']);
});

test('two different schemas with one component id are refused', (t) => {
  const first = z.object({ a: z.string() }).meta({ id: 'TestClash' });
  const second = z.object({ b: z.string() }).meta({ id: 'TestClash' });
  const routes = [echoRoute(first, first, '/first'), echoRoute(second, second, '/second')];
  t.throws(() => buildOpenApiDocument(routes, '1.0.0'), {
    message: "Two different zod schemas have the component id 'TestClash'.",
  });
});
