/**
 * The themes of an installation: the built-in ones, then the profile's custom ones, each
 * resolved to a complete set of colours.
 */
import { builtInThemes, type Theme } from './built-in-themes.js';
import type { ThemeColours } from './theme-variables.js';

/** A custom theme as the profile holds it (validated by src/themes/theme-schema.ts). */
export interface CustomThemeDefinition {
  name: string;
  label?: string | undefined;
  /** Name of the built-in theme it starts from. */
  base: string;
  productName?: string | undefined;
  variables: Partial<Record<string, string | undefined>>;
}

/** A custom theme's complete colours: its base's, with its own over them; undefined for an unknown base. */
export function resolveCustomTheme(definition: CustomThemeDefinition): Theme | undefined {
  const base = builtInThemes.find((theme) => theme.name === definition.base);
  if (!base) return undefined;
  const variables: ThemeColours = { ...base.variables };
  for (const [name, value] of Object.entries(definition.variables)) {
    if (value !== undefined && name in variables) variables[name as keyof ThemeColours] = value;
  }
  return {
    name: definition.name,
    label: definition.label ?? definition.name,
    builtIn: false,
    colorScheme: base.colorScheme,
    ...(definition.productName !== undefined ? { productName: definition.productName } : {}),
    variables,
  };
}

/** Every theme: built-in first, then the custom ones in profile order. */
export function allThemes(custom: readonly CustomThemeDefinition[] = []): Theme[] {
  const resolved = custom
    .map(resolveCustomTheme)
    .filter((theme): theme is Theme => theme !== undefined);
  return [...builtInThemes, ...resolved];
}
