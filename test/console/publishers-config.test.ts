/**
 * Configuration in the console (issue 25), in headless Chromium against an in-process demo
 * daemon and a real webhook receiver on 127.0.0.1: a webhook publisher's further fields edited
 * and saved, Send test showing the receiver's answer, a collection's preview of the demo tags
 * and a refused member named at its line, the profile check listing a missing collection; axe
 * clean at 1366×768 and at 390 px.
 */
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { expectAccessible as expectAccessibleNow, wait } from '../helpers/console-session.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const signingSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** axe at the desktop size and at a phone's width. */
async function expectAccessible(t: ExecutionContext, page: Page, where: string): Promise<void> {
  for (const size of [
    { width: 1366, height: 768 },
    { width: 390, height: 844 },
  ]) {
    await page.setViewportSize(size);
    await expectAccessibleNow(t, page, `${where} at ${size.width} px`);
  }
  await page.setViewportSize({ width: 1366, height: 768 });
}

const suite = consoleSuite('publishers-config.test.ts', 'console configuration in Chromium', {
  // A publisher naming a collection the profile lacks (Off: it cannot run), for the check.
  edit: (profile) => {
    const publishers = profile.publishers as { webhooks: Record<string, unknown>[] };
    publishers.webhooks.push({
      name: 'orphan-feed',
      destinationUrl: 'http://127.0.0.1:9/none',
      collections: ['Nowhere'],
      autoConnect: false,
    });
  },
});

if (suite) {
  test.serial(
    'publishers, collections and the profile check as an administrator uses them',
    async (t) => {
      t.timeout(240_000);
      const receiver = await startReceiver(t);
      const page = await suite.adminPage(t);
      const { url } = suite.gateway();

      // Publishers: health in words, not true/false.
      await page.goto(`${url}/#/publishers`, wait);
      const row = page.locator('tr[data-publisher="demo-receiver"]');
      await row.getByTestId('publisher-health').waitFor(wait);
      t.notRegex(await row.getByTestId('publisher-health').innerText(), /^(true|false)$/);

      // Edit the demo publisher: new destination, gzip, signing, store and forward, alarms.
      await row.getByRole('link', { name: 'Edit demo-receiver' }).click(wait);
      const form = page.getByRole('form', { name: 'Edit publisher demo-receiver' });
      await form.waitFor(wait);
      await form.getByText('Only tags holding a number go into a batch').waitFor(wait);
      t.is(await form.getByLabel('Update interval (seconds)').inputValue(), '10');
      await form.getByLabel('Destination URL').fill(receiver.url, wait);
      await form.getByLabel('Signing secret (optional)').fill(signingSecret, wait);
      await form.getByLabel('Gzip request bodies').check(wait);
      await form.getByLabel('Store and forward', { exact: false }).check(wait);
      await form.getByLabel('Outbox limit (MB)').fill('8', wait);
      await form.getByLabel('Also send alarm transitions as they happen').check(wait);
      await form.getByLabel('Alarm areas').fill('Demo\nHall2', wait);
      await form.getByLabel('Least alarm priority').selectOption('High', wait);
      await form.getByLabel('Logging mode').selectOption('Everything', wait);
      await form.getByLabel('Everything buffer (updates)').fill('5000', wait);
      await expectAccessible(t, page, 'webhook publisher form');
      await form.getByRole('button', { name: 'Save' }).click(wait);
      await page.getByRole('heading', { name: 'Publishers', exact: true }).waitFor(wait);

      // Saved as entered (the API shows secrets masked).
      const saved = await page.evaluate(async () => {
        const response = await fetch('/api/v2/Publishers/Webhooks/demo-receiver', {
          credentials: 'same-origin',
        });
        return response.json();
      });
      t.like(saved, {
        gzip: true,
        storeAndForward: true,
        bufferLimitMB: 8,
        loggingMode: 'Everything',
        everythingBufferSize: 5000,
        signingSecret: '********',
        alarms: { areas: ['Demo', 'Hall2'], minPriority: 'High' },
      });

      // Send test: one batch now; the receiver's answer shown.
      receiver.defaultReply = 202;
      const before = receiver.requests.length;
      await row.getByRole('link', { name: 'Edit demo-receiver' }).click(wait);
      await form.waitFor(wait);
      t.true(await form.getByLabel('Gzip request bodies').isChecked());
      await form.getByRole('button', { name: 'Send test batch through demo-receiver' }).click(wait);
      await form
        .getByTestId('send-test-answer')
        .filter({ hasText: 'Delivered: the receiver answered HTTP 202' })
        .waitFor(wait);
      await receiver.waitForRequests(before + 1);
      const test = receiver.requests
        .slice(before)
        .find((request) => request.reply === 202) as (typeof receiver.requests)[number];
      t.is(test.headers['content-encoding'], 'gzip');
      t.truthy(test.headers['webhook-signature']);
      const entries = test.json as { value?: unknown }[];
      t.true(entries.length > 0);
      t.true(
        entries.every((entry) => entry.value === undefined || typeof entry.value === 'number'),
      );
      await expectAccessible(t, page, 'webhook publisher form after Send test');
      await form.getByRole('button', { name: 'Cancel' }).click(wait);

      // Collections: the preview lists the demo tags a pattern matches.
      await page.goto(`${url}/#/collections/new`, wait);
      const collection = page.getByRole('form', { name: 'New collection' });
      await collection.waitFor(wait);
      await collection.getByLabel('Name').fill('press', wait);
      await collection.getByLabel('Members').fill('Demo/Line1/**\n\nDemo/NoSuchLine/*', wait);
      await collection.getByRole('button', { name: 'Preview matching tags' }).click(wait);
      const preview = collection.getByTestId('collection-preview');
      await preview.getByText(/\d+ tags? match/).waitFor(wait);
      t.true((await preview.locator('code').count()) > 0);
      t.regex(await preview.locator('code').first().innerText(), /^Demo\/Line1\//);
      await preview.getByText("Matching nothing now: 'Demo/NoSuchLine/*'").waitFor(wait);
      await expectAccessible(t, page, 'collection form with preview');

      // A wrong member is named at its line (line 3: the empty line 2 counts).
      await collection.getByLabel('Members').fill('Demo/Line1/**\n\nDemo//bad', wait);
      await collection.getByRole('button', { name: 'Create' }).click(wait);
      await collection
        .locator('#collection-members-error', { hasText: "Line 3 ('Demo//bad')" })
        .waitFor(wait);
      await expectAccessible(t, page, 'collection form with a wrong line');

      // Profile check: the collection the orphan publisher names but the profile lacks.
      await page
        .getByRole('navigation', { name: 'Console pages' })
        .getByRole('link', { name: 'Profile check' })
        .click(wait);
      await page.getByRole('button', { name: 'Check the running profile' }).click(wait);
      await page.getByTestId('profile-check-verdict').waitFor(wait);
      const warnings = page.getByTestId('profile-warnings');
      await warnings.getByText('Nowhere').waitFor(wait);
      t.regex(await warnings.innerText(), /publishers\.webhooks\[1\]\.collections\[0\]/);
      await expectAccessible(t, page, 'profile check');
    },
  );
}
