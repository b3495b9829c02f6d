/**
 * The console's theme: the account's choice (`GET/PUT /api/v2/Users/Current/Theme`) applied
 * as `data-theme` on `<html>`, which selects a block of `/theme.css`. Without a choice the
 * attribute is absent and `:root` applies: the plant default, or light or dark as the browser
 * asks. Signed out, the sign-in page shows the default.
 */
import { effect, signal } from '@preact/signals';
import { api } from './api-client';
import { session } from './session';

/** A theme as `GET /api/v2/Themes` lists it. */
export interface ThemeView {
  name: string;
  label: string;
  builtIn: boolean;
  colorScheme: 'light' | 'dark';
  productName?: string;
}

/** Every theme, and the plant default (null: the browser's setting). */
export const themeList = signal<{ default: string | null; themes: ThemeView[] }>({
  default: null,
  themes: [],
});

/** The account's choice; null: the plant default or the browser's setting. */
export const chosenTheme = signal<string | null>(null);

/** The name shown in the top bar: the product name of the theme in use, or tagd. */
export function productName(): string {
  const { themes, default: plantDefault } = themeList.value;
  const inUse = chosenTheme.value ?? plantDefault;
  return themes.find((theme) => theme.name === inUse)?.productName ?? 'tagd';
}

function apply(theme: string | null): void {
  const root = document.documentElement;
  if (theme === null) root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', theme);
}

/** Stores and applies the account's choice. @throws ApiError when refused. */
export async function chooseTheme(theme: string | null): Promise<void> {
  const answer = await api<{ theme: string | null }>('/api/v2/Users/Current/Theme', {
    method: 'PUT',
    body: { theme },
  });
  chosenTheme.value = answer.theme;
}

async function load(): Promise<void> {
  const [choice, list] = await Promise.all([
    api<{ theme: string | null }>('/api/v2/Users/Current/Theme'),
    api<{ default: string | null; themes: ThemeView[] }>('/api/v2/Themes'),
  ]);
  themeList.value = list;
  chosenTheme.value = choice.theme;
}

effect(() => apply(chosenTheme.value));
effect(() => {
  if (session.value) {
    load().catch(() => undefined);
  } else {
    chosenTheme.value = null;
  }
});
