/**
 * A Sparkplug publisher's store-and-forward on its card of the Publishers page, in headless
 * Chromium against an in-process demo daemon whose Sparkplug publisher (a `primaryHostId`) runs
 * on a real Mosquitto: with no primary host the card says it is offline and what is stored; the
 * host's STATE online turns it into "online" once the stored samples went out.
 */
import { join } from 'node:path';
import test from 'ava';
import { chromiumSkipReason } from '../helpers/chromium.js';
import {
  describeViolations,
  firstAdminSignIn,
  launchBrowser,
  screenshotFolder,
  seriousAxeViolations,
  startConsoleDaemon,
  wait,
} from '../helpers/console-session.js';
import { startMosquitto } from '../helpers/mosquitto.js';
import { scriptedHost } from '../helpers/sparkplug-host.js';

const skipReason = chromiumSkipReason();

if (skipReason) {
  console.warn(`mqtt-publisher-table.test.ts skipped: ${skipReason}`);
  test.skip('Sparkplug store-and-forward on the Publishers page', () => {});
} else {
  test('no primary host: the card says offline since when and what is stored; the host online: online', async (t) => {
    t.timeout(180_000);
    const broker = await startMosquitto(t);
    const gateway = await startConsoleDaemon((profile) => {
      const publishers = profile.publishers as Record<string, unknown[]>;
      publishers.mqtt = [
        {
          name: 'to-central',
          brokerUrl: broker.url,
          collections: ['Line1'],
          format: 'sparkplugB',
          groupId: 'Plant1',
          edgeNodeId: 'line1-gw',
          primaryHostId: 'central',
          loggingMode: 'Everything',
          updateIntervalMs: 500,
          bufferLimitMB: 8,
        },
      ];
    });
    t.teardown(() => gateway.stop());
    const browser = await launchBrowser();
    t.teardown(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await context.newPage();
    await firstAdminSignIn(page, gateway, 'a long new admin password');
    await page.goto(`${gateway.url}/#/publishers`, wait);

    const row = page.locator('tr[data-mqtt-publisher="to-central"]');
    const words = row.getByTestId('store-and-forward');
    // The simulator ticks every second: the stored count grows past zero.
    await words
      .filter({
        hasText: /^Primary host 'central' offline since .+ — storing: [1-9][\d,.\s]* samples$/,
      })
      .waitFor(wait);
    const api = (await page.evaluate(async () => {
      const response = await fetch('/api/v2/Publishers/Mqtt/to-central', {
        credentials: 'same-origin',
      });
      return response.json();
    })) as { state: { sparkplug: Record<string, unknown> } };
    t.like(api.state.sparkplug, { primaryHostOnline: false });
    t.regex(String(api.state.sparkplug.primaryHostSince), /^\d{4}-\d\d-\d\dT/);
    t.is(
      describeViolations(t, 'publishers page, host offline', await seriousAxeViolations(page)),
      '',
    );

    await row.screenshot({ path: join(await screenshotFolder(), 'sparkplug-host-offline.png') });

    const host = await scriptedHost(t, broker.url);
    await host.state(true, Date.now());
    await words.filter({ hasText: /^Primary host 'central' online since [^—]+$/ }).waitFor(wait);
    t.pass();
  });
}
