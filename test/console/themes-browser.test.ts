/**
 * Console themes (docs/console.md, "Themes") in headless Chromium against an in-process demo daemon:
 * without a choice the page follows the browser's light or dark setting; the account's choice
 * from the top bar recolours the page at once, is kept with the account across a reload, and
 * axe finds no serious contrast or other violation in any built-in theme. The CSP blocks
 * nothing (`/theme.css` is same-origin). Screenshots: `<tmp>/tagd-console-screenshots/themes-*.png`.
 */
import { join } from 'node:path';
import test from 'ava';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import { parseColour } from '../../src/themes/contrast.js';
import { computedColour, type Rgb } from '../helpers/computed-colour.js';
import { expectAccessible, screenshotFolder, wait, watchPage } from '../helpers/console-session.js';
import { consoleSuite } from '../helpers/console-suite.js';

const suite = consoleSuite('themes-browser.test.ts', 'console themes in Chromium');

/** A built-in theme's page background as the browser computes it. */
function background(name: string): Rgb {
  const colour = parseColour(
    builtInThemes.find((theme) => theme.name === name)?.variables.bg ?? '',
  );
  if (!colour) throw new Error(`no theme ${name}`);
  return [colour.r, colour.g, colour.b];
}

if (suite) {
  test.serial(
    'the page follows the browser until a theme is chosen; each built-in theme recolours it and passes axe',
    async (t) => {
      t.timeout(180_000);
      const { url } = suite.gateway();
      const page = await suite.newPage(t, {
        viewport: { width: 1366, height: 900 },
        colorScheme: 'light',
      });
      const watch = watchPage(page);
      await suite.signInAdmin(page);
      await page.goto(`${url}/#/tags?filter=PartsCount`, wait);
      await page.locator('button.tree-tag .tree-value').first().waitFor(wait);
      const html = page.locator('html');
      const picker = page.getByLabel('Theme');
      await picker.locator('option', { hasText: 'High contrast (control room)' }).waitFor({
        state: 'attached',
        ...wait,
      });

      // No choice: the browser decides.
      t.is(await html.getAttribute('data-theme'), null);
      t.deepEqual(await computedColour(html, 'background-color'), background('light'));
      await page.emulateMedia({ colorScheme: 'dark' });
      t.deepEqual(await computedColour(html, 'background-color'), background('dark'));
      await expectAccessible(t, page, 'browser dark, no choice');
      await page.emulateMedia({ colorScheme: 'light' });
      t.deepEqual(await computedColour(html, 'background-color'), background('light'));
      await expectAccessible(t, page, 'browser light, no choice');

      for (const theme of builtInThemes) {
        await picker.selectOption(theme.name, wait);
        await page
          .locator(`html[data-theme="${theme.name}"]`)
          .waitFor({ state: 'attached', ...wait });
        t.deepEqual(
          await computedColour(html, 'background-color'),
          background(theme.name),
          theme.name,
        );
        await expectAccessible(t, page, `${theme.name} theme, Tags page`);
        await page.screenshot({ path: join(await screenshotFolder(), `themes-${theme.name}.png`) });
      }
      await page.goto(`${url}/#/users`, wait);
      await page.getByRole('heading', { name: 'Users & Groups' }).first().waitFor(wait);
      await expectAccessible(t, page, 'high-contrast theme, Users page');

      // Dark is kept with the account: a reload (and the browser's light setting) keep it.
      await picker.selectOption('dark', wait);
      await page.locator('html[data-theme="dark"]').waitFor({ state: 'attached', ...wait });
      await page.reload({ waitUntil: 'load', ...wait });
      await page.locator('html[data-theme="dark"]').waitFor({ state: 'attached', ...wait });
      t.deepEqual(await computedColour(html, 'background-color'), background('dark'));
      t.is(await page.getByLabel('Theme').inputValue(), 'dark');

      // Back to the browser's setting.
      await page.getByLabel('Theme').selectOption('', wait);
      await page.locator('html:not([data-theme])').waitFor({ state: 'attached', ...wait });
      t.deepEqual(await computedColour(html, 'background-color'), background('light'));
      t.deepEqual(watch.cspViolations(), []);
    },
  );
}
