/**
 * Tag writes in the console (issue 12), in headless Chromium against an in-process demo daemon:
 * the write control on the writable demo Setpoint, its confirmation step (Cancel writes nothing,
 * Confirm writes once and the value arrives through the stream), a value outside
 * writeMin/writeMax refused at the field before the confirmation step, and a Viewer who is offered no control and whom the server refuses anyway.
 */
import { join } from 'node:path';
import test from 'ava';
import type { Page } from 'playwright-core';
import {
  createAccount,
  expectAccessible,
  screenshotFolder,
  signIn,
  wait,
} from '../helpers/console-session.js';
import { type ConsoleSuite, consoleSuite } from '../helpers/console-suite.js';

const suite = consoleSuite('console-writes.test.ts', 'console tag writes in Chromium');
const setpoint = 'Demo/Controls/Setpoint';

/** The audit lines of writes to the Setpoint so far. */
function setpointWrites(): Record<string, unknown>[] {
  return (suite as ConsoleSuite)
    .gateway()
    .logs.lines.filter((line) => line.event === 'tag-write' && line.fullTagId === setpoint);
}

/** Opens the Tags page on one tag's detail. */
async function openTag(page: Page, path: string): Promise<void> {
  const name = path.split('/').at(-1) as string;
  await page.goto(`${(suite as ConsoleSuite).gateway().url}/#/tags?filter=${name}`, wait);
  await page.locator(`button.tree-tag[data-path="${path}"]`).click(wait);
  await page.locator('.tag-detail').getByRole('heading', { name: path }).waitFor(wait);
}

if (suite) {
  test.serial(
    'an administrator writes the Setpoint with a confirmation step; Cancel writes nothing; the range message shows at the control; a Viewer gets no control and a 403; an Operator writes a boolean',
    async (t) => {
      t.timeout(180_000);
      const gateway = suite.gateway();
      const { url } = gateway;
      const page = await suite.adminPage(t, { viewport: { width: 1366, height: 900 } });

      await openTag(page, setpoint);
      const detail = page.locator('.tag-detail');
      const form = detail.getByRole('form', { name: 'Write a value' });
      await form.waitFor(wait);
      const input = form.getByLabel('New value (°C)');
      t.is(await input.getAttribute('min'), '20');
      t.is(await input.getAttribute('max'), '90');
      await detail
        .getByTestId('tag-value')
        .filter({ hasText: /^60 °C/ })
        .waitFor(wait);

      // Cancel (by keyboard: Escape) writes nothing and gives the focus back to the value.
      await input.fill('42', wait);
      await input.press('Enter');
      await form.getByText(`Write 42 °C to ${setpoint}?`).waitFor(wait);
      // Focus moves after the render: wait for it rather than read it at once (a loaded box).
      await form.locator('button:focus', { hasText: 'Confirm' }).waitFor(wait);
      await expectAccessible(t, page, 'tag write confirmation');
      await page.screenshot({ path: join(await screenshotFolder(), 'w1-write-confirm.png') });
      await page.keyboard.press('Escape');
      await form.getByRole('button', { name: 'Write…' }).waitFor(wait);
      await page.locator('#tag-write-value:focus').waitFor(wait);
      await form.getByRole('button', { name: 'Write…' }).click(wait);
      await form.getByRole('button', { name: 'Cancel' }).click(wait);
      await form.getByRole('button', { name: 'Write…' }).waitFor(wait);
      t.deepEqual(setpointWrites(), []);
      t.is(gateway.daemon.store?.get(setpoint)?.value, 60);

      // Confirm writes once; the new value comes back through the stream.
      await form.getByRole('button', { name: 'Write…' }).click(wait);
      await form.getByRole('button', { name: 'Confirm' }).click(wait);
      await form.getByRole('status').filter({ hasText: 'Written.' }).waitFor(wait);
      await detail
        .getByTestId('tag-value')
        .filter({ hasText: /^42 °C/ })
        .waitFor(wait);
      const written = setpointWrites();
      t.is(written.length, 1);
      t.like(written[0], { account: 'admin', requestedValue: 42, status: 'Good' });
      await expectAccessible(t, page, 'tag written');

      // Out of the hint's range (20–90 °C): refused at the field before any Confirm step,
      // nothing sent.
      const error = form.locator('#tag-write-value-error');
      await input.fill('95', wait);
      await form.getByRole('button', { name: 'Write…' }).click(wait);
      await error.filter({ hasText: '95 °C is above the highest value, 90 °C.' }).waitFor(wait);
      t.is(await form.getByRole('button', { name: 'Confirm' }).count(), 0);
      t.is(await input.getAttribute('aria-invalid'), 'true');
      t.is(
        await input.getAttribute('aria-describedby'),
        'tag-write-value-error tag-write-value-hint',
      );
      await input.fill('19.5', wait);
      await input.press('Enter');
      await error.filter({ hasText: '19.5 °C is below the lowest value, 20 °C.' }).waitFor(wait);
      t.is(await form.getByRole('button', { name: 'Confirm' }).count(), 0);
      t.is(setpointWrites().length, 1, 'only the write of 42');
      await expectAccessible(t, page, 'tag write refused');
      await page.screenshot({ path: join(await screenshotFolder(), 'w2-write-refused.png') });

      // A boolean tag takes a select.
      await openTag(page, 'Demo/Controls/ConveyorOn');
      await detail
        .getByRole('form', { name: 'Write a value' })
        .getByRole('combobox', { name: 'New value' })
        .waitFor(wait);
      // A read-only tag offers no write.
      await openTag(page, 'Demo/Line1/PartsCount');
      await detail.getByTestId('tag-value').filter({ hasText: /\d/ }).waitFor(wait);

      // A Viewer: no write control, and the server refuses its write.
      await createAccount(page, gateway, 'watcher', 'watcher first password');
      const viewer = await suite.newPage(t, {});
      await signIn(viewer, gateway, 'watcher', 'watcher first password');
      await viewer.goto(`${url}/#/tags?filter=Setpoint`, wait);
      await viewer.locator(`button.tree-tag[data-path="${setpoint}"]`).click(wait);
      const viewerDetail = viewer.locator('.tag-detail');
      await viewerDetail.getByTestId('tag-value').filter({ hasText: /°C/ }).waitFor(wait);
      t.is(await viewerDetail.getByRole('form', { name: 'Write a value' }).count(), 0);
      const refused = (await viewer.evaluate(`(() => {
        const csrf = document.cookie.split(';').map((part) => part.trim().split('='))
          .find(([name]) => name === 'tagd_csrf')?.[1] ?? '';
        return fetch('/api/v2/Tags/Write', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': decodeURIComponent(csrf) },
          body: JSON.stringify({ writes: [{ fullTagId: '${setpoint}', value: 30 }] }),
        }).then((response) => response.status);
      })()`)) as number;
      t.is(refused, 403);
      t.is(setpointWrites().filter((line) => line.account === 'watcher').length, 0);

      // An Operator writes the boolean ConveyorOn with its select.
      await createAccount(page, gateway, 'shift', 'shift first password', ['Operators']);
      const operator = await suite.newPage(t, {});
      await signIn(operator, gateway, 'shift', 'shift first password');
      const conveyor = 'Demo/Controls/ConveyorOn';
      await openTag(operator, conveyor);
      const before = gateway.daemon.store?.get(conveyor)?.value;
      const target = before === true ? 'false' : 'true';
      const operatorForm = operator
        .locator('.tag-detail')
        .getByRole('form', { name: 'Write a value' });
      await operatorForm.getByRole('combobox', { name: 'New value' }).selectOption(target, wait);
      await operatorForm.getByRole('button', { name: 'Write…' }).click(wait);
      await operatorForm
        .getByText(`Write ${target === 'true' ? 'On (true)' : 'Off (false)'} to ${conveyor}?`)
        .waitFor(wait);
      await operatorForm.getByRole('button', { name: 'Confirm' }).click(wait);
      await operatorForm.getByRole('status').filter({ hasText: 'Written.' }).waitFor(wait);
      await operator
        .locator('.tag-detail')
        .getByTestId('tag-value')
        .filter({ hasText: new RegExp(`^${target}`) })
        .waitFor(wait);
      t.like(
        gateway.logs.lines.find((line) => line.event === 'tag-write' && line.account === 'shift'),
        { fullTagId: conveyor, requestedValue: target === 'true', status: 'Good' },
      );
    },
  );
}
