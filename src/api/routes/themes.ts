/**
 * Console themes (docs/console.md, "Themes"): the list every signed-in account reads, the account's own
 * choice, the plant's custom themes (`ThemeManage`, saved to the profile's `themes` section),
 * and the stylesheet `/theme.css` that the console and the extension apps load.
 *
 * Decisions: a custom theme is created or replaced by PUT (its name is the path's, as for a
 * file), so the console's editor needs one call. Deleting the plant default also clears
 * `themes.default`, so pages fall back to following the browser rather than to no theme.
 * Accounts that chose a deleted theme keep the name: `/theme.css` has no block for it, so
 * their pages show the default until they choose again.
 */
import { z } from 'zod';
import type { Principal } from '../../auth/account-service.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { ProfileInput } from '../../profile/schema.js';
import { builtInThemeNames, type Theme } from '../../themes/built-in-themes.js';
import { allThemes } from '../../themes/theme-catalog.js';
import { type ThemeStylesheet, themeStylesheet } from '../../themes/theme-css.js';
import {
  type CustomThemeInput,
  customThemeBodySchema,
  themeNameSchema,
} from '../../themes/theme-schema.js';
import { themeVariables } from '../../themes/theme-variables.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

/** Path of the stylesheet, on the API listeners and the extensions server. */
export const themeStylesheetPath = '/theme.css';

const tag = 'Themes';
const basePath = '/api/v2/Themes';

/** A theme as listed by `GET /api/v2/Themes`. */
export const themeModelSchema = z
  .object({
    name: z.string().describe('The `data-theme` value.'),
    label: z.string(),
    builtIn: z.boolean(),
    colorScheme: z.enum(['light', 'dark']),
    productName: z.string().optional().describe('Shown instead of "tagd" while in use.'),
    variables: z
      .record(z.string(), z.string())
      .describe(`Every colour variable (without \`--\`): ${themeVariables.join(', ')}.`),
  })
  .meta({ id: 'Theme' });

/** The answer of `GET /api/v2/Themes`. */
export const themeListSchema = z
  .object({
    default: z
      .string()
      .nullable()
      .describe(
        'The plant default (`themes.default`); null: light, or dark when the browser asks.',
      ),
    themes: z.array(themeModelSchema),
  })
  .meta({ id: 'ThemeList' });

/** The account's choice: a theme name, or null to follow the plant default or the browser. */
export const themeChoiceSchema = z
  .strictObject({
    theme: themeNameSchema.nullable().describe('null: the plant default, or the browser setting.'),
  })
  .meta({ id: 'ThemeChoice' });

/** A custom theme's body (its name is the path's). */
export const customThemeModelSchema = customThemeBodySchema.meta({
  id: 'CustomTheme',
  description:
    'A theme starting from a built-in one (`base`) with some colours changed. Colours are #rgb, #rrggbb, rgb() or hsl(), opaque; text pairs need 4.5:1 (7:1 on a high-contrast base).',
});

const nameParams = z.object({ name: themeNameSchema });

/** The theme routes and `/theme.css`. */
export function themeRoutes(deps: ApiDeps): RouteDefinition[] {
  const section = () => deps.profile?.current().themes;
  const themes = (): Theme[] => allThemes(section()?.custom ?? []);
  // Rebuilt only when the profile's themes change: the stylesheet is asked for on every page load.
  let cached: { key: string; sheet: ThemeStylesheet } | undefined;
  const stylesheet = (): ThemeStylesheet => {
    const current = section();
    const key = JSON.stringify(current ?? null);
    if (cached?.key !== key) cached = { key, sheet: themeStylesheet(themes(), current?.default) };
    return cached.sheet;
  };
  const profile = () => {
    if (!deps.profile) throw new Error('The theme routes need the profile service.');
    return deps.profile;
  };
  const manage = { kind: 'permission', permission: 'ThemeManage' } as const;

  return [
    defineRoute({
      method: 'get',
      path: themeStylesheetPath,
      operationId: 'getThemeStylesheet',
      tag,
      summary: 'Every theme as CSS variables',
      description:
        'For the console and extension apps (also served by the extensions server). `:root` holds the plant default, or light with a `prefers-color-scheme: dark` block holding dark; `[data-theme="NAME"]` on `<html>` selects a theme. Revalidated on every load (ETag, 304).',
      access: { kind: 'public' },
      responses: {
        200: { description: 'The stylesheet.', mediaType: 'text/css' },
        304: { description: 'Unchanged since the ETag given in If-None-Match.' },
      },
      problems: [],
      handle: ({ context }) => {
        const sheet = stylesheet();
        context.set('Cache-Control', 'no-cache');
        context.set('ETag', sheet.etag);
        const asked = context.get('If-None-Match');
        if (asked.split(',').some((tagValue) => tagValue.trim() === sheet.etag)) {
          context.status = 304;
          return undefined;
        }
        context.status = 200;
        context.type = 'text/css; charset=utf-8';
        return sheet.css;
      },
    }),
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: 'listThemes',
      tag,
      summary: 'List themes',
      description: 'The built-in themes, then the custom ones, each with every colour.',
      access: { kind: 'token', types: ['access', 'service'] },
      responses: { 200: { description: 'The themes.', schema: themeListSchema } },
      problems: [],
      handle: () => ({ default: section()?.default ?? null, themes: themes() }),
    }),
    defineRoute({
      method: 'put',
      path: `${basePath}/{name}`,
      operationId: 'putTheme',
      tag,
      summary: 'Create or replace a custom theme',
      description:
        'Saves the theme to the profile. A built-in name is refused (400). A colour that is not #rgb, #rrggbb, rgb() or hsl(), or a text pair below 4.5:1 (7:1 on a high-contrast base), is refused naming the variable and the pair.',
      access: manage,
      params: nameParams,
      body: customThemeModelSchema,
      responses: { 200: { description: 'Saved.', schema: themeModelSchema } },
      problems: [],
      handle: async ({ params, body, principal }) => {
        refuseBuiltIn(params.name);
        const definition: CustomThemeInput = { name: params.name, ...body };
        await profile().update(
          (draft) => {
            const list = customOf(draft);
            const index = list.findIndex((theme) => theme.name === params.name);
            if (index < 0) list.push(definition);
            else list[index] = definition;
          },
          audited('theme-saved', params.name, principal),
        );
        const saved = themes().find((theme) => theme.name === params.name);
        if (!saved) throw new Error(`theme '${params.name}' missing after saving`);
        return saved;
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/{name}`,
      operationId: 'deleteTheme',
      tag,
      summary: 'Delete a custom theme',
      description:
        'Removes the theme; when it was the plant default, pages follow the browser again. Accounts that chose it see the default.',
      access: manage,
      params: nameParams,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404],
      handle: async ({ context, params, principal }) => {
        refuseBuiltIn(params.name);
        let wasDefault = false;
        await profile().update(
          (draft) => {
            const list = customOf(draft);
            const index = list.findIndex((theme) => theme.name === params.name);
            if (index < 0) throw new NotFoundError(`No custom theme named '${params.name}'.`);
            list.splice(index, 1);
            if (draft.themes?.default === params.name) {
              wasDefault = true;
              delete draft.themes.default;
            }
          },
          audited('theme-deleted', params.name, principal),
        );
        if (wasDefault) deps.logger.info({ theme: params.name }, 'default theme deleted');
        context.status = 204;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v2/Users/Current/Theme',
      operationId: 'getCurrentUserTheme',
      tag: 'Users',
      summary: "The account's theme",
      access: { kind: 'token', types: ['access'] },
      responses: { 200: { description: 'The choice.', schema: themeChoiceSchema } },
      problems: [],
      handle: ({ principal }) => ({ theme: principal?.user.theme ?? null }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v2/Users/Current/Theme',
      operationId: 'setCurrentUserTheme',
      tag: 'Users',
      summary: "Choose the account's theme",
      description:
        'A theme of `GET /api/v2/Themes`, or null to follow the plant default or the browser. Stored with the account, so it follows the account to any browser.',
      access: { kind: 'token', types: ['access'] },
      body: themeChoiceSchema,
      responses: { 200: { description: 'Stored.', schema: themeChoiceSchema } },
      problems: [],
      handle: async ({ body, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        if (body.theme !== null && !themes().some((theme) => theme.name === body.theme)) {
          throw new ValidationError('The request body is invalid.', [
            { path: 'theme', message: `No theme named '${body.theme}'.` },
          ]);
        }
        await deps.accounts.setTheme(principal, body.theme ?? undefined);
        return { theme: body.theme };
      },
    }),
  ];
}

function refuseBuiltIn(name: string): void {
  if (builtInThemeNames.includes(name)) {
    throw new ValidationError('The request is invalid.', [
      { path: 'name', message: `'${name}' is a built-in theme and cannot be changed.` },
    ]);
  }
}

function customOf(draft: ProfileInput): CustomThemeInput[] {
  draft.themes ??= {};
  draft.themes.custom ??= [];
  return draft.themes.custom as CustomThemeInput[];
}

function audited(event: string, theme: string, principal: Principal | undefined) {
  return { event, theme, username: principal?.user.username };
}
