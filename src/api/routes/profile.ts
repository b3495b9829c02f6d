/**
 * The profile as a whole (`ProfileManage`, Administrators): `GET /api/v2/Profile` reads the
 * profile in force with every secret masked, `POST /api/v2/Profile/Check` lists every problem of
 * a profile sent in the body as `tagd profile check` does, `POST /api/v2/Profile/Reload`
 * re-reads the profile file and restarts only what changed, like `systemctl reload tagd`.
 *
 * Decision: a permission of its own rather than UserManage or DriverManage, because the profile
 * holds every section (listeners, publishers, history), and reading it whole is as sensitive
 * as changing any of them; only Administrators hold it.
 */
import { z } from 'zod';
import { profileSchema } from '../../profile/schema.js';
import { maskSecrets, secretMask, unmaskSecrets } from '../../profile/secret-fields.js';
import type { ProfileReloader } from '../../reload/profile-reloader.js';
import type { ApiDeps } from '../api-deps.js';
import { configurationBodyBytes } from '../json-bodies.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { refuseStateDirFiles } from '../state-dir-guard.js';

const tag = 'Profile';

/** What a reload (or a driver change) did, component by component. */
export const reloadSummarySchema = z
  .object({
    started: z
      .array(z.string())
      .describe(
        'Components the new profile added, now running: `drivers/<name>`, `collections/<name>`, `publishers.webhooks/<name>`, `publishers.mqtt/<name>`, `history`, `extensions`.',
      ),
    restarted: z
      .array(z.string())
      .describe(
        'Components whose configuration changed, stopped and started again (`license`: the license file now grants something else).',
      ),
    stopped: z.array(z.string()).describe('Components the new profile removed or disabled.'),
    unchanged: z.array(z.string()).describe('Components left running as they were.'),
    requiresRestart: z
      .array(z.string())
      .describe(
        'Sections that changed but take effect only at the next restart of tagd: `server` (listeners), `security` (token lifetimes, write rate limit), `queries` (limits).',
      ),
    failed: z
      .array(z.object({ component: z.string(), message: z.string() }))
      .describe(
        'Components that could not start with their new configuration, and why; the others run.',
      ),
  })
  .meta({ id: 'ReloadSummary' });

const fieldProblemSchema = z.object({
  path: z.string().describe('The field, in `a.b[2].c` notation; `(root)` for the document.'),
  message: z.string(),
});

/** What `POST /api/v2/Profile/Check` answers. */
export const profileCheckSchema = z
  .object({
    valid: z
      .boolean()
      .describe('True when tagd would start with every part of this profile running.'),
    problems: z
      .array(
        fieldProblemSchema.extend({
          effect: z
            .enum(['refused', 'driver-left-out', 'publisher-error', 'app-left-out', 'unlicensed'])
            .optional()
            .describe(
              "For a start-up check's finding, what `tagd start` does about it; absent for a schema error.",
            ),
        }),
      )
      .describe('Every error, schema and start-up checks together.'),
    warnings: z
      .array(fieldProblemSchema)
      .describe('References to tags or collections the profile does not define.'),
    uncheckedSecrets: z
      .array(z.string())
      .describe('Sealed secrets this tagd cannot open (sealed with another key).'),
    startupChecks: z
      .enum(['all', 'valid-parts', 'skipped'])
      .describe(
        '`all`: the whole profile went through the start-up checks; `valid-parts`: the parts without schema errors did; `skipped`: none could.',
      ),
  })
  .meta({ id: 'ProfileCheck' });

/** The profile routes. */
export function profileRoutes(deps: ApiDeps): RouteDefinition[] {
  const access = { kind: 'permission', permission: 'ProfileManage' } as const;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Profile',
      operationId: 'getProfile',
      tag,
      summary: 'The profile in force, secrets masked',
      description: `The whole profile as the daemon runs it (defaults filled in), in the shape of \`config/profile.schema.json\`, every secret (destination URLs, credentials, passphrases) shown as \`${secretMask}\`. Changes made over the API since start are in it.`,
      access,
      responses: {
        200: {
          description: 'The profile.',
          schema: z.record(z.string(), z.unknown()).meta({
            id: 'Profile',
            description: 'A tagd profile (see config/profile.schema.json).',
          }),
        },
      },
      problems: [],
      handle: () => {
        if (!deps.profile) throw new Error('The profile route needs the profile service.');
        return maskSecrets(profileSchema, deps.profile.current());
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Profile/Check',
      operationId: 'checkProfile',
      tag,
      summary: 'List every problem of a profile, changing nothing',
      description: `What \`tagd profile check\` does, on the profile in the body: the schema and cross-field rules, sealed secrets (opened with this tagd's key), and the start-up checks (listeners, HTTPS certificates, DBC, replay, broker and CA files, the license) — on the parts without errors when the schema found some, so one call lists everything. Relative file names are resolved from the running profile's folder; files in the state directory are refused (400). Secrets shown as \`${secretMask}\` (as GET Profile gives them) stand for the running profile's values. Warnings (derived tags or alarms reading tags no driver declares; publishers or history naming collections the profile lacks) leave the profile valid. Answers 200 whether or not the profile is valid.`,
      access,
      body: z.record(z.string(), z.unknown()).meta({ description: 'A tagd profile document.' }),
      maxBodyBytes: configurationBodyBytes,
      responses: { 200: { description: 'The problems found.', schema: profileCheckSchema } },
      problems: [400],
      handle: async ({ body }) => {
        if (!deps.checkProfile || !deps.profile) {
          throw new Error('The profile check route needs the profile checker.');
        }
        if (deps.stateDirGuard) refuseStateDirFiles(body, deps.stateDirGuard);
        const document = unmaskSecrets(profileSchema, body, deps.profile.current());
        const report = await deps.checkProfile(document);
        return {
          valid: report.problems.length === 0 && report.uncheckedSecrets.length === 0,
          problems: report.problems,
          warnings: report.warnings,
          uncheckedSecrets: report.uncheckedSecrets,
          startupChecks: report.startupChecks,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Profile/Reload',
      operationId: 'reloadProfile',
      tag,
      summary: 'Re-read the profile file and restart what changed',
      description:
        'What `systemctl reload tagd` does: the profile file is read and validated as at start. Changed drivers, collections, webhook and MQTT publishers, the history section and the extensions server restart; the rest keeps running, and the API answers throughout. The license file is read again. Changes to `server`, `security` or `queries` are listed in `requiresRestart`. An invalid profile is refused with 400 `profile-invalid` listing every error with its path; the running configuration stays. A reload asked for while another runs waits for it; 503 `busy` while tagd starts or stops.',
      access,
      responses: { 200: { description: 'What the reload did.', schema: reloadSummarySchema } },
      problems: [400, 503],
      handle: async ({ principal }) => {
        const summary = await reloaderOf(deps).reload('api');
        deps.audit.info(
          { event: 'profile-reloaded', username: principal?.user.username, ...summary },
          'profile reloaded',
        );
        return summary;
      },
    }),
  ];
}

/** The reloader of the deps; its absence is a wiring error (500). */
export function reloaderOf(deps: ApiDeps): ProfileReloader {
  if (!deps.reloader) throw new Error('This route needs the profile reloader.');
  return deps.reloader;
}
