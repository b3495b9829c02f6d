import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ApiDeps } from '../api-deps.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { swaggerInitializerJs, swaggerPageHtml } from '../swagger-ui/page.js';

/** Path of the OpenAPI document (spec §4: `{docs_segment}/v2/{docs_segment}.json`). */
export const openApiPath = '/swagger/v2/swagger.json';

const documentSchema = z
  .looseObject({
    openapi: z.literal('3.1.0'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.looseObject({}),
  })
  .describe('An OpenAPI 3.1 document.');

/** A static file of the Swagger UI page. */
interface StaticFile {
  /** Media type of the response. */
  type: string;
  load(): Promise<Buffer>;
}

/**
 * The API's own documentation: the OpenAPI document generated from
 * every route definition, and Swagger UI served offline from swagger-ui-dist. All public:
 * on the main host the API and its documentation are always published (spec §4).
 */
export function docsRoutes(
  deps: ApiDeps,
  servedRoutes: () => readonly RouteDefinition[],
): RouteDefinition[] {
  // Built on first request, once per app, from the list the app serves (docs routes included).
  let document: OpenApiDocument | undefined;
  return [
    defineRoute({
      method: 'get',
      path: openApiPath,
      operationId: 'getOpenApiDocument',
      tag: 'Docs',
      summary: 'This OpenAPI document',
      description:
        'Generated from the same schemas that validate requests; import it into API tools to generate clients.',
      access: { kind: 'public' },
      responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: documentSchema } },
      problems: [],
      handle: () => {
        document ??= buildOpenApiDocument(servedRoutes(), deps.version);
        return document;
      },
    }),
    staticRoute({
      path: '/swagger',
      operationId: 'getSwaggerUi',
      summary: 'Swagger UI: browse and try the API',
      description:
        'Interactive documentation of this document. **Authorize** takes a token (see the introduction).',
      file: { type: 'text/html', load: async () => Buffer.from(swaggerPageHtml) },
    }),
    staticRoute({
      path: '/swagger/swagger-ui.css',
      operationId: 'getSwaggerUiCss',
      summary: 'Swagger UI stylesheet',
      file: { type: 'text/css', load: () => vendorFile('swagger-ui.css') },
    }),
    staticRoute({
      path: '/swagger/swagger-ui-bundle.js',
      operationId: 'getSwaggerUiBundle',
      summary: 'Swagger UI script',
      file: { type: 'application/javascript', load: () => vendorFile('swagger-ui-bundle.js') },
    }),
    staticRoute({
      path: '/swagger/swagger-initializer.js',
      operationId: 'getSwaggerUiInitializer',
      summary: 'Script that starts Swagger UI on this document',
      file: { type: 'application/javascript', load: async () => Buffer.from(swaggerInitializerJs) },
    }),
  ];
}

function staticRoute(options: {
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  file: StaticFile;
}): RouteDefinition {
  const { file } = options;
  // Read once, when first asked for; the files do not change while tagd runs.
  let loaded: Promise<{ body: Buffer; etag: string }> | undefined;
  return defineRoute({
    method: 'get',
    path: options.path,
    operationId: options.operationId,
    tag: 'Docs',
    summary: options.summary,
    ...(options.description ? { description: options.description } : {}),
    access: { kind: 'public' },
    responses: { 200: { description: 'The file.', mediaType: file.type } },
    problems: [],
    handle: async ({ context }) => {
      loaded ??= file.load().then((body) => ({
        body,
        etag: createHash('sha256').update(body).digest('base64url').slice(0, 27),
      }));
      const { body, etag } = await loaded;
      return answerFile(context, file.type, body, etag);
    },
  });
}

/** Sends a file with an ETag; a browser that holds it already gets 304 and no body. */
function answerFile(
  context: Context,
  type: string,
  body: Buffer,
  etag: string,
): Buffer | undefined {
  context.status = 200;
  context.type = type;
  context.etag = etag;
  // Revalidated on each load (cheap with the ETag), so an upgrade is seen at once.
  context.set('Cache-Control', 'no-cache');
  if (context.fresh) {
    context.status = 304;
    return undefined;
  }
  return body;
}

const vendorFolder = dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);

/** A file of the swagger-ui-dist package, installed with tagd (no CDN: plants are offline). */
function vendorFile(name: string): Promise<Buffer> {
  return readFile(join(vendorFolder, name));
}
