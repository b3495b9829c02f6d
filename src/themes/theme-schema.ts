/**
 * The profile's `themes` section: the plant's default theme and its custom themes. A custom
 * theme starts from a built-in one and changes some of its colours; every colour must be an
 * opaque hex, rgb() or hsl() colour (nothing else can reach `/theme.css`), and the result must
 * pass the contrast check (src/themes/contrast.ts) or the theme is refused naming the pair.
 */
import { z } from 'zod';
import { builtInThemeNames } from './built-in-themes.js';
import { contrastFailures, describeFailure, maxColourLength, parseColour } from './contrast.js';
import { resolveCustomTheme } from './theme-catalog.js';
import { themeVariableRoles, themeVariables } from './theme-variables.js';

/** A theme name: lower-case letters and digits, words joined by `-`, at most 40 characters. */
export const themeNameSchema = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'may hold lower-case letters, digits and single -')
  .describe('Theme name, e.g. `plant-blue`; the `data-theme` value.');

const colourSchema = z
  .string()
  .max(maxColourLength)
  .refine((value) => parseColour(value) !== undefined, {
    message: 'must be an opaque colour: #rgb, #rrggbb, rgb(r, g, b) or hsl(h, s%, l%)',
  });

/** The colours a custom theme changes: any of the theme variables, each a colour. */
export const themeVariablesSchema = z
  .strictObject(
    Object.fromEntries(
      themeVariables.map((name) => [
        name,
        colourSchema.optional().describe(`--${name}: ${themeVariableRoles[name]}.`),
      ]),
    ) as Record<(typeof themeVariables)[number], z.ZodOptional<typeof colourSchema>>,
  )
  .describe('Colours that differ from the base theme, by variable name without `--`.');

/** What a custom theme holds besides its name (the body of `PUT /api/v2/Themes/{name}`). */
export const customThemeFields = {
  label: z
    .string()
    .min(1)
    .max(60)
    .optional()
    .describe('Shown in the theme picker. Default: the name.'),
  base: z
    .enum(builtInThemeNames as [string, ...string[]])
    .default('light')
    .describe(
      'Built-in theme whose colours the others keep. A `high-contrast` base needs 7:1 for text.',
    ),
  productName: z
    .string()
    .min(1)
    .max(40)
    .regex(/^[\p{L}\p{N} .,&()'_-]+$/u, "may hold letters, digits, spaces and . , & ( ) ' _ -")
    .optional()
    .describe('Shown in the console top bar instead of "tagd" while this theme is in use.'),
  variables: themeVariablesSchema.prefault({}),
};

/** Refuses a custom theme whose resolved colours fail the contrast check, naming each pair. */
function checkContrast(
  theme: { base: string; variables: Partial<Record<string, string | undefined>> },
  context: z.RefinementCtx,
): void {
  const resolved = resolveCustomTheme({ name: 'check', ...theme });
  // A colour that does not parse is reported by its own field already.
  if (!resolved || Object.values(resolved.variables).some((value) => !parseColour(value))) return;
  for (const failure of contrastFailures(resolved.variables, theme.base === 'high-contrast')) {
    context.addIssue({
      code: 'custom',
      // At the colour the theme set, so a form can mark the field that was changed.
      path: [
        'variables',
        theme.variables[failure.foreground] === undefined &&
        theme.variables[failure.background] !== undefined
          ? failure.background
          : failure.foreground,
      ],
      message: `Contrast too low: ${describeFailure(failure)}.`,
    });
  }
}

/** Body of `PUT /api/v2/Themes/{name}`. */
export const customThemeBodySchema = z.strictObject(customThemeFields).superRefine(checkContrast);

/** One custom theme of the profile. */
export const customThemeSchema = z
  .strictObject({
    name: themeNameSchema.refine((name) => !builtInThemeNames.includes(name), {
      message: 'is the name of a built-in theme',
    }),
    ...customThemeFields,
  })
  .superRefine(checkContrast);

/** A custom theme as written in the profile, before defaults. */
export type CustomThemeInput = z.input<typeof customThemeSchema>;
/** A validated custom theme. */
export type CustomTheme = z.infer<typeof customThemeSchema>;

/** The profile's `themes` section. */
export const themesSchema = z
  .strictObject({
    default: themeNameSchema
      .optional()
      .describe(
        'Theme of every account that chose none. Absent: light, or dark when the browser asks for dark mode.',
      ),
    custom: z.array(customThemeSchema).max(50).default([]).describe("The plant's own themes."),
  })
  .superRefine((section, context) => {
    const names = new Set<string>(builtInThemeNames);
    section.custom.forEach((theme, index) => {
      if (names.has(theme.name)) {
        context.addIssue({
          code: 'custom',
          path: ['custom', index, 'name'],
          message: `Theme '${theme.name}' is defined twice.`,
        });
      }
      names.add(theme.name);
    });
    if (section.default !== undefined && !names.has(section.default)) {
      context.addIssue({
        code: 'custom',
        path: ['default'],
        message: `No theme named '${section.default}'.`,
      });
    }
  })
  .describe('Console themes: the default and custom themes (docs/console.md, "Themes").');

/** The validated `themes` section. */
export type ThemesConfig = z.infer<typeof themesSchema>;
