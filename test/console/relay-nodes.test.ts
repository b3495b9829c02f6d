/**
 * The edge nodes of a Sparkplug host driver on its card of the Drivers page, in headless
 * Chromium against an in-process demo daemon with a `sparkplug` driver on a real Mosquitto and
 * a scripted edge node.
 */
import test from 'ava';
import { chromiumSkipReason } from '../helpers/chromium.js';
import {
  describeViolations,
  firstAdminSignIn,
  launchBrowser,
  seriousAxeViolations,
  startConsoleDaemon,
  wait,
} from '../helpers/console-session.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { subscribe } from '../helpers/mqtt-subscriber.js';
import { ScriptedEdge } from '../helpers/sparkplug-edge.js';
import { until } from '../helpers/until.js';

const skipReason = chromiumSkipReason();

if (skipReason) {
  console.warn(`relay-nodes.test.ts skipped: ${skipReason}`);
  test.skip('relay nodes on the Drivers page', () => {});
} else {
  test('a Sparkplug driver’s card lists its edge nodes: state, devices online, tags, seq errors, rebirths', async (t) => {
    t.timeout(180_000);
    const broker = await startMosquitto(t);
    const gateway = await startConsoleDaemon((profile) => {
      (profile.drivers as unknown[]).push({
        type: 'sparkplug',
        name: 'central',
        brokerUrl: broker.url,
        hostId: 'scada',
      });
    });
    t.teardown(() => gateway.stop());
    const browser = await launchBrowser();
    t.teardown(() => browser.close());
    const edge = await ScriptedEdge.connect(t, broker.url, 'Hall2', 'line1', 1);
    // The host's STATE online is published once it has subscribed: the births then reach it.
    const state = await subscribe(t, broker.url, 'spBv1.0/STATE/scada');
    await state.waitFor((messages) =>
      messages.some((message) => JSON.parse(message.payload.toString()).online === true),
    );
    await edge.nbirth([{ name: 'Speed', alias: 1, type: 'Double', value: 1 }]);
    await edge.dbirth('D', [{ name: 'x', alias: 2, type: 'Double', value: 2 }]);
    // Bounded by the test's own timeout, as the wait was before.
    await until(
      () => gateway.daemon.store?.get('central/Hall2/line1/D/x')?.quality === 'Good',
      'the edge node’s tag is Good',
      180_000,
      50,
    );

    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    await firstAdminSignIn(page, gateway, 'a long new admin password');
    await page.goto(`${gateway.url}/#/drivers`, wait);
    const card = page.locator('article.card', {
      has: page.getByRole('heading', { name: /^central/ }),
    });
    const table = card.getByRole('table', { name: 'Edge nodes of central' });
    await table.waitFor(wait);
    const row = table.locator('tbody tr').first();
    await row.getByText('Online').waitFor(wait);
    const cells = await row.locator('td').allInnerTexts();
    t.is(cells[0], 'Hall2/line1');
    t.deepEqual(cells.slice(2), ['1/1', '3', '0', '0']);
    const violations = await seriousAxeViolations(page);
    t.is(describeViolations(t, 'drivers page with relay nodes', violations), '');

    await edge.ndeath();
    await row.getByText('Offline').waitFor(wait);
    t.pass();
  });
}
