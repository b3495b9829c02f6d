/**
 * Builds the OpenAPI 3.1 document from the route definitions, with the zod schemas that
 * validate requests converted by zod's own JSON Schema generator (draft 2020-12, the dialect
 * of OpenAPI 3.1). Nothing here is written by hand per route, so the document cannot drift
 * from what the router serves.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { builtInRoles } from '../auth/permissions.js';
import { type ErrorCode, errorCodes } from '../errors.js';
import { csrfCookie, csrfHeader, sessionCookie } from './authenticate.js';
import { maxBodyBytes, sizeText } from './json-bodies.js';
import { largeBodyBudgetBytes } from './large-body-budget.js';
import { problemMediaType } from './problem.js';
import type { RouteDefinition } from './route.js';

/** A JSON Schema (or any other JSON object) inside the document. */
export type JsonObject = Record<string, unknown>;

/** One operation of the document. */
export interface OpenApiOperation {
  tags: string[];
  summary: string;
  description: string;
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: JsonObject[];
  requestBody?: JsonObject;
  responses: Record<string, JsonObject>;
}

/** The OpenAPI 3.1 document tagd serves at `/swagger/v2/swagger.json`. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  tags: { name: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    securitySchemes: Record<string, JsonObject>;
    schemas: Record<string, JsonObject>;
  };
}

/** `info.version` of the committed snapshot, so a version bump does not change it. */
export const snapshotVersion = '0.0.0-snapshot';

const errorCodeNames = Object.keys(errorCodes) as [ErrorCode, ...ErrorCode[]];

/** The RFC 9457 problem document every error is answered with (see problem.ts). */
export const problemSchema = z
  .object({
    type: z.string().describe('`urn:tagd:problem:<code>`.'),
    title: z.string().describe('The HTTP status text.'),
    status: z.int().min(400).max(599).describe('The HTTP status.'),
    detail: z.string().describe('What went wrong, safe to show to a user.'),
    instance: z.string().describe('The request path the problem is about.'),
    code: z
      .enum(errorCodeNames)
      .describe(
        `Stable error code to match on:\n\n${errorCodeNames
          .map((code) => `- \`${code}\` (${errorCodes[code].status}): ${errorCodes[code].meaning}`)
          .join('\n')}`,
      ),
    errors: z
      .array(
        z.object({
          path: z.string().describe('The wrong field, e.g. `bindings[0].source`.'),
          message: z.string(),
          line: z
            .int()
            .optional()
            .describe('For `expression-invalid`: 1-based line of the problem in the expression.'),
          column: z
            .int()
            .optional()
            .describe('For `expression-invalid`: 1-based column (characters) in that line.'),
          expected: z
            .string()
            .optional()
            .describe('For `expression-invalid`: what was expected there, when known.'),
        }),
      )
      .optional()
      .describe(
        'For `validation-failed`: every field that was wrong; for `expression-invalid`: the problem in the expression, with its position.',
      ),
  })
  .meta({ id: 'Problem', description: 'An RFC 9457 problem document.' });

const securitySchemes = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An access token from `POST /api/v2/Users/Authenticate`, or a service account token from `tagd tokens generate NAME`.',
  },
  cookieAuth: {
    type: 'apiKey',
    in: 'cookie',
    name: sessionCookie,
    description: `Browser session from \`POST /api/v2/Users/Authenticate?useCookies=true\`. Unsafe methods must echo the \`${csrfCookie}\` cookie in the \`${csrfHeader}\` header.`,
  },
} as const;

/**
 * Builds the document for `routes` (in their order).
 * @param version tagd's version, for `info.version`.
 * @throws Error when two different zod schemas share a component id, or a schema cannot be
 *   expressed in JSON Schema: a programming error the OpenAPI tests catch.
 */
export function buildOpenApiDocument(
  routes: readonly RouteDefinition[],
  version: string,
): OpenApiDocument {
  const schemas = new SchemaCollector();
  const paths: OpenApiDocument['paths'] = {};
  const tags: string[] = [];
  for (const route of routes) {
    if (!tags.includes(route.tag)) tags.push(route.tag);
    const operations = paths[route.path] ?? {};
    paths[route.path] = operations;
    if (operations[route.method]) {
      throw new Error(`Two routes for ${route.method.toUpperCase()} ${route.path}.`);
    }
    operations[route.method] = operationOf(route, schemas);
  }
  schemas.convert(problemSchema, 'output');
  return schemas.resolve({
    openapi: '3.1.0',
    info: { title: 'tagd API', version, description: apiDescription() },
    tags: tags.map((name) => ({ name })),
    paths,
    components: { securitySchemes: structuredClone(securitySchemes), schemas: {} },
  });
}

/**
 * The snapshot text of a document: its `info.version` replaced by {@link snapshotVersion},
 * 2-space JSON with a final newline. Key order is the generator's, which is deterministic.
 */
export function openApiSnapshotText(document: OpenApiDocument): string {
  const stable = { ...document, info: { ...document.info, version: snapshotVersion } };
  return `${JSON.stringify(stable, null, 2)}\n`;
}

function operationOf(route: RouteDefinition, schemas: SchemaCollector): OpenApiOperation {
  const operation: OpenApiOperation = {
    tags: [route.tag],
    summary: route.summary,
    description: [route.description, accessText(route)].filter(Boolean).join('\n\n'),
    operationId: route.operationId,
    responses: {},
  };
  if (route.access.kind === 'status-token') operation.security = [{ bearerAuth: [] }];
  else if (route.access.kind !== 'public') {
    operation.security = [{ bearerAuth: [] }, { cookieAuth: [] }];
  }
  const parameters = [
    ...parametersOf(route.params, 'path', schemas),
    ...parametersOf(route.query, 'query', schemas),
  ];
  if (parameters.length > 0) operation.parameters = parameters;
  if (route.body) {
    operation.requestBody = {
      required: true,
      content: { 'application/json': { schema: schemas.convert(route.body, 'input') } },
    };
  }
  const statuses = new Set([
    ...Object.keys(route.responses).map(Number),
    ...problemStatuses(route),
  ]);
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const success = route.responses[status];
    operation.responses[String(status)] = success
      ? successResponse(success.description, success.schema, success.mediaType, schemas)
      : problemResponse(status, route);
  }
  return operation;
}

function accessText(route: RouteDefinition): string {
  const { access } = route;
  if (access.kind === 'public') return 'No token needed.';
  if (access.kind === 'status-token') {
    return 'Needs the local status token from `<state>/status.key` (readable by the daemon user and root) as a Bearer token; account tokens are refused.';
  }
  if (access.kind === 'permission') {
    const needs = `Needs the \`${access.permission}\` permission (access or service token)`;
    return access.waived ? `${needs}, except ${access.waived.description}.` : `${needs}.`;
  }
  return `Accepts a token of type ${access.types.map((type) => `\`${type}\``).join(' or ')}.`;
}

/** Statuses answered with a problem document: the route's own, and those its access and body imply. */
function problemStatuses(route: RouteDefinition): number[] {
  const statuses = new Set(route.problems);
  if (route.access.kind !== 'public') statuses.add(401);
  // A cookie session can also be refused with 403 csrf-failed on an unsafe method.
  if (
    route.access.kind === 'permission' ||
    (route.access.kind !== 'public' && route.method !== 'get')
  ) {
    statuses.add(403);
  }
  if (route.body) for (const status of [400, 413, 415]) statuses.add(status);
  // A large body that the shared budget cannot hold now (large-body-budget.ts).
  if (readsLargeBody(route)) statuses.add(503);
  return [...statuses];
}

/** True for a route whose body limit is raised: its bodies count in the large-body budget. */
function readsLargeBody(route: RouteDefinition): boolean {
  return route.body !== undefined && (route.maxBodyBytes ?? maxBodyBytes) > maxBodyBytes;
}

function successResponse(
  description: string,
  schema: z.ZodType | undefined,
  mediaType: string | undefined,
  schemas: SchemaCollector,
): JsonObject {
  if (!schema && !mediaType) return { description };
  const type = mediaType ?? 'application/json';
  const body = schema
    ? schemas.convert(schema, 'output')
    : type.startsWith('image/')
      ? { type: 'string', contentMediaType: type }
      : { type: 'string' };
  return { description, content: { [type]: { schema: body } } };
}

function problemResponse(status: number, route: RouteDefinition): JsonObject {
  const response: JsonObject = {
    description: problemDescription(status, route),
    content: { [problemMediaType]: { schema: { $ref: '#/components/schemas/Problem' } } },
  };
  if (status === 401) {
    response.headers = {
      'WWW-Authenticate': {
        description: 'The authentication scheme: `Bearer realm="tagd"`.',
        schema: { type: 'string' },
      },
    };
  }
  if (status === 429 || (status === 503 && readsLargeBody(route))) {
    response.headers = {
      'Retry-After': {
        description: 'Seconds to wait before trying again.',
        schema: { type: 'integer', minimum: 1 },
      },
    };
  }
  return response;
}

function problemDescription(status: number, route: RouteDefinition): string {
  switch (status) {
    case 400:
      return 'The request is invalid; for `validation-failed`, `errors` lists every wrong field.';
    case 401:
      return 'Missing, invalid, expired or revoked token (`unauthorized`).';
    case 403:
      return 'The account lacks the permission (`forbidden`), or a cookie session did not send the CSRF header (`csrf-failed`).';
    case 404:
      return 'Not found.';
    case 409:
      return 'The request conflicts with the state of the service.';
    case 413: {
      const limit = route.maxBodyBytes ?? maxBodyBytes;
      return `The body is larger than ${limit} bytes (${sizeText(limit)}), this route's limit (\`payload-too-large\`).`;
    }
    case 415:
      return 'The body is not `application/json` (`unsupported-media-type`).';
    case 429:
      return 'Too many attempts; try again after `Retry-After` seconds (`too-many-requests`).';
    case 503:
      return readsLargeBody(route)
        ? `Busy (\`busy\`): other large request bodies fill the ${sizeText(largeBodyBudgetBytes)} the gateway reads and handles at once (try again after \`Retry-After\` seconds)${route.problems.includes(503) ? ', or another change holds the profile' : ''}.`
        : 'An error; see the problem document.';
    default:
      return 'An error; see the problem document.';
  }
}

function parametersOf(
  schema: z.ZodType | undefined,
  location: 'path' | 'query',
  schemas: SchemaCollector,
): JsonObject[] {
  if (!schema) return [];
  const object = schemas.convert(schema, 'input');
  const properties = object.properties as Record<string, JsonObject> | undefined;
  if (object.type !== 'object' || !properties) {
    throw new Error(
      `The ${location} schema must be a plain z.object(), not ${JSON.stringify(object)}.`,
    );
  }
  const required = new Set((object.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      // OpenAPI requires every path parameter to be marked required.
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

type Io = 'input' | 'output';

/**
 * Converts zod schemas and gathers every schema with a `.meta({ id })` as a component. Request
 * schemas are converted as input (what a client may send: defaults optional, unknown keys
 * accepted) and responses as output; an id whose two forms differ gets a second component
 * `<id>Input`. References are kept as `#/$defs/<io>/<id>` until {@link resolve} names them.
 */
class SchemaCollector {
  private readonly defs = {
    input: new Map<string, JsonObject>(),
    output: new Map<string, JsonObject>(),
  };

  /** The JSON Schema of `schema`, with components collected and references marked. */
  convert(schema: z.ZodType, io: Io): JsonObject {
    const converted = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonObject;
    const { $schema: _dialect, $defs, ...root } = converted;
    for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, JsonObject>)) {
      if (id.startsWith('__')) {
        throw new Error(`A recursive or shared schema needs a .meta({ id }) to be named (${id}).`);
      }
      const marked = markRefs(definition, io) as JsonObject;
      const known = this.defs[io].get(id);
      if (known && !isDeepStrictEqual(known, marked)) {
        throw new Error(`Two different zod schemas have the component id '${id}'.`);
      }
      this.defs[io].set(id, marked);
    }
    return markRefs(root, io) as JsonObject;
  }

  /** Names the components, puts them (sorted) in the document and rewrites every reference. */
  resolve(document: OpenApiDocument): OpenApiDocument {
    const separateInput = this.inputsThatDiffer();
    const nameOf = (io: Io, id: string) =>
      io === 'input' && separateInput.has(id) ? `${id}Input` : id;
    const components: Record<string, JsonObject> = {};
    for (const [id, definition] of this.defs.output) components[id] = definition;
    for (const [id, definition] of this.defs.input) {
      if (!this.defs.output.has(id) || separateInput.has(id))
        components[nameOf('input', id)] = definition;
    }
    const sorted = Object.fromEntries(
      Object.keys(components)
        .sort()
        .map((name) => [name, components[name]]),
    );
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (value === null || typeof value !== 'object') return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => {
          const marker = key === '$ref' && typeof item === 'string' ? refMarker.exec(item) : null;
          if (marker)
            return [key, `#/components/schemas/${nameOf(marker[1] as Io, marker[2] as string)}`];
          return [key, rewrite(item)];
        }),
      );
    };
    return rewrite({
      ...document,
      components: { ...document.components, schemas: sorted },
    }) as OpenApiDocument;
  }

  // An input form differs when its own JSON does, or when it refers to one that differs.
  private inputsThatDiffer(): Set<string> {
    const differ = new Set<string>();
    const strip = (value: JsonObject) =>
      JSON.stringify(value).replace(/#\/\$defs\/(input|output)\//g, '');
    for (const [id, definition] of this.defs.input) {
      const output = this.defs.output.get(id);
      if (output && strip(output) !== strip(definition)) differ.add(id);
    }
    for (let changed = true; changed; ) {
      changed = false;
      for (const [id, definition] of this.defs.input) {
        if (differ.has(id) || !this.defs.output.has(id)) continue;
        const refs = [...JSON.stringify(definition).matchAll(/#\/\$defs\/input\/([^"]+)/g)];
        if (refs.some((match) => differ.has(match[1] as string))) {
          differ.add(id);
          changed = true;
        }
      }
    }
    return differ;
  }
}

const refMarker = /^#\/\$defs\/(input|output)\/(.+)$/;

function markRefs(value: unknown, io: Io): unknown {
  if (Array.isArray(value)) return value.map((item) => markRefs(item, io));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) =>
      key === '$ref' && typeof item === 'string' && item.startsWith('#/$defs/')
        ? [key, `#/$defs/${io}/${item.slice('#/$defs/'.length)}`]
        : [key, markRefs(item, io)],
    ),
  );
}

function apiDescription(): string {
  const roles = Object.entries(builtInRoles)
    .map(([role, granted]) => `${role} (${granted.join(', ')})`)
    .join(', ');
  return `REST API of tagd, the edge gateway: latest tag values, query sets over live and logged data, CAN signals, and the accounts that may read them.

## Authentication

1. **Sign in** with \`POST /api/v2/Users/Authenticate\` and \`{ "username", "password" }\`. The answer's \`token\` is an access token; \`refreshToken\` renews it through \`GET /api/v2/Users/Refresh\`. When \`requiresTwoFactor\` or \`requiresPasswordChange\` is set, the answer carries a \`preAuthToken\` instead: complete \`POST /api/v2/Users/Authenticate/TwoFactor\` or \`POST /api/v2/Users/Current/ChangePassword\` with it first.
2. **Send the token** as \`Authorization: Bearer <token>\`. On this page: **Authorize**, paste the token under \`bearerAuth\`.
3. **Scripts and integrations** use a service account: \`tagd users add NAME --service\`, then \`tagd tokens generate NAME\` prints its token (shown once; generating again voids the previous one). A service token does not expire and has no refresh token.
4. **Browsers** may sign in with \`?useCookies=true\`: the session stays in HttpOnly cookies (\`${sessionCookie}\`), and unsafe requests must echo the \`${csrfCookie}\` cookie in the \`${csrfHeader}\` header.

A missing, invalid, expired or revoked token is answered **401**; a valid token whose account lacks the route's permission **403**. Permissions come from roles: ${roles}.

## Errors

Every error is an RFC 9457 problem document (\`${problemMediaType}\`, schema \`Problem\`) with a stable \`code\`.`;
}
