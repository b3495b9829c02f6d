/**
 * MQTT publishers in the console (issue 13), in headless Chromium against an in-process demo
 * daemon (its demo license covers the data relay) and a real Mosquitto: validation messages at
 * their fields, a publisher created from the console that shows On, its broker URL masked on
 * edit and kept when saved unchanged, Stop and Start.
 */
import { join } from 'node:path';
import test from 'ava';
import { expectAccessible, screenshotFolder, wait } from '../helpers/console-session.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { subscribe } from '../helpers/mqtt-subscriber.js';

const suite = consoleSuite('console-mqtt.test.ts', 'console MQTT publishers in Chromium');

if (suite) {
  test.serial(
    'an MQTT publisher created in the console shows On; invalid fields show their messages; the masked broker URL is kept when saved unchanged',
    async (t) => {
      t.timeout(180_000);
      const broker = await startMosquitto(t);
      const page = await suite.adminPage(t, { viewport: { width: 1366, height: 900 } });
      const { url } = suite.gateway();

      await page.goto(`${url}/#/publishers`, wait);
      await page.getByRole('heading', { name: 'MQTT', exact: true }).waitFor(wait);
      await page.getByText('No MQTT publishers yet.').waitFor(wait);
      await page.getByRole('link', { name: 'New MQTT publisher' }).click(wait);
      const form = page.getByRole('form', { name: 'New MQTT publisher' });
      await form.waitFor(wait);
      await expectAccessible(t, page, 'new MQTT publisher form');

      // Invalid: no broker URL, an interval too short, no collection.
      await form.getByLabel('Name', { exact: true }).fill('relay', wait);
      await form.getByLabel('Update interval (seconds)').fill('0.001', wait);
      await form.getByRole('button', { name: 'Create' }).click(wait);
      await form
        .locator('#brokerUrl-error', { hasText: 'You must provide an MQTT broker URL.' })
        .waitFor(wait);
      await form
        .locator('#updateIntervalMs-error', { hasText: 'from 0.01 to 86400 seconds' })
        .waitFor(wait);
      await form
        .locator('#collections-error', { hasText: 'You must select a collection.' })
        .waitFor(wait);
      t.is(await form.getByLabel('Broker URL').getAttribute('aria-invalid'), 'true');
      await expectAccessible(t, page, 'MQTT publisher form with errors');
      await page.screenshot({
        path: join(await screenshotFolder(), 'm1-mqtt-invalid.png'),
        fullPage: true,
      });

      // Sparkplug B asks for its ids instead of the topic prefix.
      await form.getByLabel('Format').selectOption('sparkplugB', wait);
      await form.getByLabel('Group id').waitFor(wait);
      t.is(await form.getByLabel('Topic prefix').count(), 0);
      await form.getByLabel('Format').selectOption('json', wait);

      await form.getByLabel('Broker URL').fill(broker.url, wait);
      await form.getByLabel('Update interval (seconds)').fill('0.5', wait);
      await form.getByLabel('Topic prefix').fill('plant/console', wait);
      await form.getByRole('checkbox', { name: 'Line1' }).check(wait);
      await form.getByRole('button', { name: 'Create' }).click(wait);

      const row = page.locator('tr[data-mqtt-publisher="relay"]');
      await row.getByTestId('publisher-status').filter({ hasText: 'On' }).waitFor(wait);
      await row.getByText('Waiting for the broker:').waitFor(wait);
      await row.getByText('Oldest waiting:').waitFor(wait);
      t.is(await row.locator('code').innerText(), '********');
      await expectAccessible(t, page, 'publishers page with MQTT');
      await page.screenshot({
        path: join(await screenshotFolder(), 'm2-mqtt-on.png'),
        fullPage: true,
      });

      const subscriber = await subscribe(t, broker.url, 'plant/console/#');
      await subscriber.waitFor((messages) =>
        messages.some((m) => m.topic === 'plant/console/Line1'),
      );

      // Edit: the broker URL shows masked; saved unchanged, the stored one is kept (still On).
      await row.getByRole('link', { name: 'Edit MQTT publisher relay' }).click(wait);
      const edit = page.getByRole('form', { name: 'Edit MQTT publisher relay' });
      await edit.waitFor(wait);
      t.is(await edit.getByLabel('Broker URL').inputValue(), '********');
      t.is(await edit.getByLabel('Topic prefix').inputValue(), 'plant/console');
      // One unit across the forms: 500 ms shows as 0.5 seconds.
      t.is(await edit.getByLabel('Update interval (seconds)').inputValue(), '0.5');
      // Send test: one batch to plant/console/test, the broker's PUBACK shown.
      await edit.getByRole('button', { name: 'Send test batch through relay' }).click(wait);
      await edit
        .getByTestId('send-test-answer')
        .filter({ hasText: 'Delivered: the broker acknowledged (PUBACK, reason code 0)' })
        .waitFor(wait);
      await subscriber.waitFor((messages) =>
        messages.some((message) => message.topic === 'plant/console/test'),
      );
      await expectAccessible(t, page, 'MQTT publisher edit form after Send test');
      await edit.getByLabel('Client id (optional)').fill('console-relay', wait);
      await edit.getByLabel('QoS').selectOption('0', wait);
      await edit.getByRole('button', { name: 'Save' }).click(wait);
      await row.getByTestId('publisher-status').filter({ hasText: 'On' }).waitFor(wait);
      await row.getByText('QoS 0').waitFor(wait);
      // The saved publisher (now QoS 0) delivers to the same broker: the stored URL was kept.
      const saved = await subscriber.waitFor((messages) =>
        messages.some((message) => message.topic === 'plant/console/Line1' && message.qos === 0),
      );
      t.true(saved.length > 0);

      // Stop and Start.
      await row.getByRole('button', { name: 'Stop MQTT publisher relay' }).click(wait);
      await row.getByTestId('publisher-status').filter({ hasText: 'Off' }).waitFor(wait);
      await row.getByRole('button', { name: 'Start MQTT publisher relay' }).click(wait);
      await row.getByTestId('publisher-status').filter({ hasText: 'On' }).waitFor(wait);
    },
  );
}
