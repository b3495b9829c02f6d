/**
 * The derived-tag editor of the Drivers page (issue 21), in headless Chromium against an
 * in-process demo daemon: the demo's derived tags listed with their expression and quality; a new
 * tag whose syntax error shows at its line and column with a caret, whose live preview shows the
 * value and each input with its quality, saved through the Drivers API; then the tag in the Tags
 * tree with its expression in the detail panel.
 */
import test from 'ava';
import { expectAccessible, wait } from '../helpers/console-session.js';
import { consoleSuite } from '../helpers/console-suite.js';

const suite = consoleSuite('derived-tags.test.ts', 'console derived-tag editor in Chromium');

if (suite) {
  test.serial(
    'the Drivers page lists derived tags; the editor shows a syntax error at its position, previews live, and saves',
    async (t) => {
      t.timeout(180_000);
      const { url, daemon } = suite.gateway();
      const page = await suite.adminPage(t, { viewport: { width: 1366, height: 900 } });
      await page.goto(`${url}/#/drivers`, wait);

      const section = page.locator('section', {
        has: page.getByRole('heading', { name: 'Derived tags' }),
      });
      const flowRow = section.locator('tr', { hasText: 'Derived/Line1/Flow' }).first();
      await flowRow.getByText('scale({Demo/Line1/FlowRaw}, 0, 27648, 0, 50)').waitFor(wait);
      await flowRow.locator('.quality-good').waitFor(wait);

      await section.getByRole('button', { name: 'New derived tag' }).click(wait);
      const form = page.getByRole('form', { name: 'New derived tag' });
      await form.getByLabel('Driver').fill('Calc', wait);
      await form.getByLabel('Name').fill('Double', wait);
      const expression = form.getByLabel('Expression');
      await expression.fill('{Demo/Line1/Temperature} *', wait);
      await form
        .getByText("Line 1, column 27: '*' has no right-hand operand. Expected an operand.")
        .waitFor(wait);
      t.is(await expression.getAttribute('aria-invalid'), 'true');
      t.is(
        await form.getByTestId('expression-caret').textContent(),
        `{Demo/Line1/Temperature} *\n${' '.repeat(26)}^`,
      );
      await expectAccessible(t, page, 'derived-tag editor with an error');

      await expression.fill('{Demo/Line1/Temperature} * 2', wait);
      const preview = form.getByRole('region', { name: 'Preview' });
      await preview.locator('.quality-good').first().waitFor(wait);
      const inputs = preview.getByRole('list', { name: 'Inputs' });
      await inputs.getByText('Demo/Line1/Temperature').waitFor(wait);
      await inputs.locator('.quality-good').waitFor(wait);
      t.is(await expression.getAttribute('aria-invalid'), null);
      const shown = Number(await preview.getByTestId('derived-preview-value').textContent());
      t.true(shown > 100 && shown < 140, `twice an oven temperature of 55–65 °C: ${shown}`);

      // A unit the profile refuses (over 32 characters): the field says so and is marked invalid.
      const unit = form.getByLabel('Unit');
      await unit.fill('degrees Celsius, measured at the oven wall', wait);
      await form.getByRole('button', { name: 'Create' }).click(wait);
      await form.locator('#derived-unit-error').waitFor(wait);
      t.is(await unit.getAttribute('aria-invalid'), 'true');
      t.is(await unit.getAttribute('aria-describedby'), 'derived-unit-error');
      t.is(daemon.store?.get('Calc/Double'), undefined, 'nothing saved');

      await unit.fill('°C', wait);
      await form.getByRole('button', { name: 'Create' }).click(wait);
      await section.locator('tr', { hasText: 'Calc/Double' }).waitFor(wait);
      const saved = daemon.store?.get('Calc/Double');
      t.is(saved?.quality, 'Good');
      t.is(saved?.metadata?.unit, '°C');

      // In the Tags tree like any tag, with its expression in the detail panel.
      await page.goto(`${url}/#/tags?filter=Calc/`, wait);
      await page.locator('button.tree-tag[data-path="Calc/Double"]').click(wait);
      const detail = page.locator('.tag-detail');
      await detail.getByText('derived: {Demo/Line1/Temperature} * 2').waitFor(wait);
    },
  );
}
