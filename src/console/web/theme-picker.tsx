import { useState } from 'preact/hooks';
import { ApiError } from './api-client';
import { chooseTheme, chosenTheme, themeList } from './theme';

/** The account's theme, in the top bar: the browser's setting (or plant default) or a theme. */
export function ThemePicker() {
  const [error, setError] = useState('');
  const { themes, default: plantDefault } = themeList.value;
  const fallback = plantDefault
    ? `Plant default (${themes.find((theme) => theme.name === plantDefault)?.label ?? plantDefault})`
    : 'Browser setting';
  const onChange = (value: string) => {
    setError('');
    chooseTheme(value === '' ? null : value).catch((caught: unknown) =>
      setError(caught instanceof ApiError ? caught.message : 'The theme was not saved.'),
    );
  };
  return (
    <span class="theme-picker">
      <label>
        Theme{' '}
        <select
          class="theme-select"
          value={chosenTheme.value ?? ''}
          onChange={(event) => onChange(event.currentTarget.value)}
        >
          <option value="">{fallback}</option>
          {themes.map((theme) => (
            <option key={theme.name} value={theme.name}>
              {theme.label}
            </option>
          ))}
        </select>
      </label>
      {error && (
        <span class="theme-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
