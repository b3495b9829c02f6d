/**
 * The profile section `extensions`: the separate web server for custom apps (spec §1). Its
 * listeners follow the API listeners' rules; the API and its docs answer there only when
 * enabled.
 */
import { z } from 'zod';
import { httpListenerSchema, httpsListenerSchema } from '../profile/listener-schema.js';

/** Default Content-Security-Policy of an app: its own files only, no inline script or style. */
export const defaultAppCsp =
  "default-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/**
 * First path segments the extensions server keeps for itself (compared without case, as the
 * router matches routes): an app named so would be shadowed by the API or docs when enabled, or
 * serve files at the API's address when not.
 */
export const reservedAppNames: readonly string[] = ['api', 'swagger', 'healthz'];

const appSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_-]*$/,
        'may hold letters, digits, _ and -, and starts with a letter or digit',
      )
      .refine((name) => !reservedAppNames.includes(name.toLowerCase()), {
        message: `is reserved (${reservedAppNames.join(', ')})`,
      })
      .describe('The app is served at /{name}/.'),
    folder: z
      .string()
      .min(1)
      .describe(
        "Folder holding the app's files, index.html first. A relative path is resolved from the folder of the profile file.",
      ),
    csp: z
      .string()
      .min(1)
      .max(4096)
      // A header value: no line breaks or control characters that could split the header.
      .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII on one line')
      .optional()
      .describe(
        `Content-Security-Policy of the app's files. Default: ${defaultAppCsp} (no inline script, no other origin).`,
      ),
  })
  .describe('A static web app.');

/** One app of the extensions server, as validated. */
export type ExtensionAppConfig = z.infer<typeof appSchema>;

/** The `extensions` section. Absent: no extensions server. */
export const extensionsSchema = z
  .strictObject({
    listen: httpListenerSchema({
      port: 8081,
      description:
        'Plain HTTP listener of the extensions server: loopback unless allowInsecure, like server.http.',
    }).prefault({}),
    https: httpsListenerSchema({
      port: 8444,
      description:
        'HTTPS listener of the extensions server, with its own certificate and key. Absent: none.',
    }).optional(),
    apps: z
      .array(appSchema)
      .default([])
      .superRefine((apps, context) => {
        const seen = new Set<string>();
        for (const [index, app] of apps.entries()) {
          const key = app.name.toLowerCase();
          if (seen.has(key)) {
            context.addIssue({
              code: 'custom',
              path: [index, 'name'],
              message: `Another app is named ${app.name} already (names are compared without case).`,
            });
          }
          seen.add(key);
        }
      })
      .describe('Static web apps, each served at /{name}/.'),
    enableApi: z
      .boolean()
      .default(false)
      .describe(
        'Serve the whole /api/v2 on the extensions server too (same accounts, authentication and limits). Default false: 404 there.',
      ),
    enableDocs: z
      .boolean()
      .default(false)
      .describe(
        'Serve /swagger and the OpenAPI document on the extensions server too. Default false: 404 there.',
      ),
  })
  .describe(
    'The web server for extensions: custom apps, and the API and its docs when enabled. The main listeners always serve the API and its docs.',
  );

/** The `extensions` section, defaults applied. */
export type ExtensionsConfig = z.infer<typeof extensionsSchema>;
