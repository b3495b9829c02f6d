/**
 * The console driven in headless Chromium as a person would, against an in-process demo daemon
 * on the real clock: the first sign-in with its forced password change, live values, publishers
 * (validation at the field, Error while the receiver is down and On once it is back), a service
 * token generated under User Actions used with curl, a Viewer who sees no Users page and whom
 * the server refuses, and axe-core on every page. Screenshots go to
 * `<tmp>/tagd-console-screenshots` for a person to look at.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import type { Page } from 'playwright-core';
import { totpCode } from '../../src/auth/totp.js';
import { UserManagement } from '../../src/auth/user-management.js';
import { UserStore } from '../../src/auth/user-store.js';
import { SecretBox } from '../../src/profile/secret-box.js';
import { computedColour, greenish, greyish, reddish } from '../helpers/computed-colour.js';
import {
  createAccount,
  expectAccessible,
  screenshotFolder,
  signIn,
  wait,
  watchPage,
} from '../helpers/console-session.js';
import { adminPassword, consoleSuite } from '../helpers/console-suite.js';
import { captureLogs } from '../helpers/log-capture.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Enrols TOTP for an account of the running daemon the way `tagd users 2fa enable` does (the
 * daemon watches users.json); returns the base32 secret.
 */
async function enrolTwoFactor(stateDir: string, username: string): Promise<string> {
  const users = new UserStore({ stateDir });
  await users.start();
  try {
    const management = new UserManagement({
      users,
      tokens: () => Promise.reject(new Error('no tokens here')),
      audit: captureLogs().logger,
      secretBox: () => SecretBox.open(stateDir),
    });
    const { uri } = await management.enableTwoFactor(username);
    return new URL(uri).searchParams.get('secret') as string;
  } finally {
    await users.stop();
  }
}

let admin: Page | undefined;
let adminWatch: ReturnType<typeof watchPage> | undefined;
/** The one-time password the administrator's reset gave `watcher` (an Operator by then). */
let watcherOneTimePassword = '';

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(await screenshotFolder(), `${name}.png`), fullPage: true });
}

function adminPage(): Page {
  if (!admin) throw new Error('the sign-in test did not run');
  return admin;
}

// The first test is the first sign-in itself (its forced password change): the tests sign
// `admin` in on their own, never with the suite's signInAdmin.
const suite = consoleSuite('console-browser.test.ts', 'console in Chromium');

if (suite) {
  test.serial(
    'first sign-in: the one-time password must be changed, then the console opens',
    async (t) => {
      t.timeout(120_000);
      // The later tests go on with this page: its context lives as long as the browser.
      const context = await suite.browser().newContext({ viewport: { width: 1366, height: 768 } });
      // The token's Copy button writes to the clipboard, which headless Chromium grants on request.
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      const page = await context.newPage();
      adminWatch = watchPage(page);
      admin = page;
      const { url } = suite.gateway();
      await page.goto(`${url}/`, { waitUntil: 'load', ...wait });
      await page.getByRole('button', { name: 'Sign in' }).waitFor(wait);
      await expectAccessible(t, page, 'sign-in page');
      await shot(page, '01-sign-in');

      await page.getByLabel('Username').fill('admin', wait);
      await page
        .getByLabel('Password', { exact: true })
        .fill(await suite.gateway().initialPassword(), wait);
      await page.getByRole('button', { name: 'Sign in' }).click(wait);
      await page.getByText('This account must choose a new password').waitFor(wait);
      await expectAccessible(t, page, 'password change');
      await shot(page, '02-password-change');
      // Too short: the server's message appears at its field.
      await page.getByLabel('New password', { exact: true }).fill('short', wait);
      await page.getByLabel('Repeat the new password').fill('short', wait);
      await page.getByRole('button', { name: 'Change password' }).click(wait);
      const notAcceptable = page.getByText('The new password is not acceptable.');
      await notAcceptable.waitFor(wait);
      await page.locator('#newPassword-error').waitFor(wait);
      // A later, different error replaces it: nothing of the earlier answer stays on screen.
      await page.getByLabel('New password', { exact: true }).fill(adminPassword, wait);
      await page.getByLabel('Repeat the new password').fill('a different password', wait);
      await page.getByRole('button', { name: 'Change password' }).click(wait);
      await page
        .locator('#repeat-error', { hasText: 'The two new passwords differ.' })
        .waitFor(wait);
      t.is(await notAcceptable.count(), 0, 'the earlier form message is gone');
      t.is(
        await page.locator('#newPassword-error').count(),
        0,
        'the earlier field message is gone',
      );
      await page.getByLabel('Repeat the new password').fill(adminPassword, wait);
      await page.getByRole('button', { name: 'Change password' }).click(wait);

      const nav = page.getByRole('navigation', { name: 'Console pages' });
      await nav.waitFor(wait);
      for (const name of ['Tags', 'Drivers', 'Publishers', 'Collections', 'Users & Groups']) {
        await nav.getByRole('link', { name }).waitFor(wait);
      }
      // The session is in HttpOnly cookies; the page sees only the CSRF cookie.
      const cookies = await context.cookies();
      t.true(cookies.find((cookie) => cookie.name === 'tagd_session')?.httpOnly);
      t.deepEqual(
        await page.evaluate("document.cookie.split(';').map((part) => part.trim().split('=')[0])"),
        ['tagd_csrf'],
      );
      // A reload resumes the session instead of asking again.
      await page.reload({ waitUntil: 'load', ...wait });
      await nav.waitFor(wait);
      // Two tabs resuming at once renew one after the other: a refresh token works once, and
      // a second use of it would end the sign-in.
      const second = await context.newPage();
      await Promise.all([
        second.goto(`${url}/#/drivers`, { waitUntil: 'load', ...wait }),
        page.reload({ waitUntil: 'load', ...wait }),
      ]);
      await second.getByRole('heading', { name: 'Drivers' }).waitFor(wait);
      await nav.waitFor(wait);
      await second.reload({ waitUntil: 'load', ...wait });
      await second.getByRole('heading', { name: 'Drivers' }).waitFor(wait);
      await second.close();
      await page.bringToFront();
    },
  );

  test.serial(
    'Tags: a simulator value changes on screen within 2 s; metadata and history of a tag',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      await page.goto(`${suite.gateway().url}/#/tags?filter=PartsCount`, wait);
      const row = page.locator('button.tree-tag[data-path="Demo/Line1/PartsCount"]');
      const value = row.locator('.tree-value');
      await value.filter({ hasText: /\d/ }).waitFor(wait);
      // When the simulator wrote each value (node's clock), and when the page showed the next
      // one (the page's Date.now: the same machine's clock). The bound is from the device's
      // value to the screen, so a loaded machine slowing the test itself does not count.
      const written = new Map<string, number>();
      const unsubscribe = suite.gateway().daemon.store?.subscribe((updates) => {
        for (const { sample } of updates) {
          if (sample.fullTagId === 'Demo/Line1/PartsCount') {
            written.set(String(sample.value), Date.now());
          }
        }
      });
      t.teardown(() => unsubscribe?.());
      const nextChange = async () =>
        (await page.evaluate(`new Promise((resolve, reject) => {
          const cell = document.querySelector('button.tree-tag[data-path="Demo/Line1/PartsCount"] .tree-value');
          setTimeout(() => reject(new Error('the value did not change within 20 s')), 20000);
          new MutationObserver(() => resolve({ text: cell.textContent, at: Date.now() }))
            .observe(cell, { characterData: true, childList: true, subtree: true });
        })`)) as { text: string; at: number };
      // A value written just before the subscription may still be on its way: take the next.
      let shown = await nextChange();
      let number = /^\d+/.exec(shown.text)?.[0] ?? '';
      if (!written.has(number)) {
        shown = await nextChange();
        number = /^\d+/.exec(shown.text)?.[0] ?? '';
      }
      const writtenAt = written.get(number);
      if (writtenAt === undefined)
        throw new Error(`no write of ${number} seen (shown ${shown.text})`);
      const latency = shown.at - writtenAt;
      t.log(`PartsCount ${number}: on screen ${latency} ms after the simulator wrote it`);
      t.true(latency <= 2_000, `${latency} ms`);
      await row.locator('.quality-good', { hasText: 'Good' }).waitFor(wait);

      await row.click(wait);
      const detail = page.locator('.tag-detail');
      await detail.getByRole('heading', { name: 'Demo/Line1/PartsCount' }).waitFor(wait);
      await detail.locator('.facts dd', { hasText: /^parts$/ }).waitFor(wait);
      // The demo logs Line1 to SQLite: the chart reads it through TagQuerySet.
      await detail.locator('.history-status', { hasText: /logged values/ }).waitFor(wait);
      await detail.locator('.chart canvas').waitFor(wait);
      await expectAccessible(t, page, 'tags page');
      await shot(page, '03-tags');

      // Keyboard: Enter opens a folder, arrow keys move between rows, Enter selects a tag.
      await page.getByLabel('Filter tags').fill('', wait);
      await page.locator('button.tree-folder', { hasText: 'Demo' }).focus(wait);
      await page.keyboard.press('Enter');
      const line1 = page.locator('button.tree-folder', { hasText: 'Line1' });
      await line1.waitFor(wait);
      // Demo holds Controls (the writable demo tags) before Line1, in path order.
      await page.keyboard.press('ArrowDown');
      await page.locator('button.tree-folder:focus', { hasText: 'Controls' }).waitFor(wait);
      await page.keyboard.press('ArrowDown');
      await page.locator('button.tree-folder:focus', { hasText: 'Line1' }).waitFor(wait);
      await page.keyboard.press('Enter');
      t.is(await line1.getAttribute('aria-expanded'), 'true');
      await page.keyboard.press('ArrowDown');
      await page.locator('button[data-path="Demo/Line1/FillLevel"]:focus').waitFor(wait);
      await page.keyboard.press('Enter');
      await detail.getByRole('heading', { name: 'Demo/Line1/FillLevel' }).waitFor(wait);

      // Lost communications is unmistakable: neither grey (what is switched off) nor green.
      suite.gateway().daemon.store?.write([
        {
          fullTagId: 'Test/Link/Lost',
          utcTimestamp: new Date().toISOString(),
          quality: 'Unavailable',
          reason: 'Disconnected',
          message: 'The connection to the device is lost.',
        },
      ]);
      await page.getByLabel('Filter tags').fill('Link/Lost', wait);
      const lost = page.locator('button.tree-tag[data-path="Test/Link/Lost"] .quality-unavailable');
      await lost.waitFor(wait);
      const lostColour = await computedColour(lost, 'background-color');
      t.false(greyish(lostColour), `Unavailable badge rgb(${lostColour})`);
      t.true(reddish(lostColour), `Unavailable badge rgb(${lostColour})`);
    },
  );

  test.serial(
    'History: averages over long ranges span the range; text values are listed; the axis speaks the browser language (de-DE)',
    async (t) => {
      t.timeout(180_000);
      const { url } = suite.gateway();
      const page = await suite.newPage(t, {
        viewport: { width: 1366, height: 900 },
        locale: 'de-DE',
        timezoneId: 'Europe/Berlin',
      });
      await signIn(page, suite.gateway(), 'admin', adminPassword);
      await page.goto(`${url}/#/tags?filter=Line1/Temperature`, wait);
      await page.locator('button.tree-tag[data-path="Demo/Line1/Temperature"]').click(wait);
      const history = page.locator('.tag-detail .history');
      await history.locator('.history-status', { hasText: /logged values?\./ }).waitFor(wait);
      await history.locator('.chart canvas').waitFor(wait);

      // The axis labels uPlot draws, as the chart exposes them: German 24-hour times and
      // day.month dates, never "1:35am" or "11/27".
      const germanAxis = async (where: string) => {
        const labels = JSON.parse(
          (await history.locator('.chart').getAttribute('data-time-ticks', wait)) ?? '[]',
        ) as string[];
        t.log(`${where}: ${JSON.stringify(labels)}`);
        t.true(labels.length >= 2, `${where}: axis labels`);
        for (const line of labels.flatMap((label) => label.split('\n'))) {
          t.regex(line, /^(\d{2}:\d{2}(:\d{2})?|\d{1,2}\.\d{1,2}\.|\d{4})$/, where);
        }
      };
      await germanAxis('last hour, raw');
      t.regex(
        await history.locator('.history-range').innerText(),
        /^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} – \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$/,
      );

      // Averages over 24 hours or 7 days of a gateway started minutes ago: one or two windows,
      // drawn at the right end of an axis that runs over the whole range.
      await history.getByLabel('Series').selectOption('Aggregated', wait);
      for (const [label, window] of [
        ['Last 24 hours', '15-minute'],
        ['Last 7 days', '1-hour'],
      ] as const) {
        await history.getByLabel('Range').selectOption({ label }, wait);
        await history
          .locator('.history-status', { hasText: new RegExp(`averages? of ${window} windows`) })
          .waitFor(wait);
        // Pixels of the series colour (#1f6feb) on the canvas, against the plot area.
        const drawn = (await (
          await page.waitForFunction(
            `(() => {
              const host = document.querySelector('.tag-detail .chart');
              const canvas = host && host.querySelector('canvas');
              const over = host && host.querySelector('.u-over');
              if (!canvas || !over) return false;
              const box = canvas.getBoundingClientRect();
              const plot = over.getBoundingClientRect();
              const scale = canvas.width / box.width;
              const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
              const xs = [];
              for (let i = 0; i < pixels.length; i += 4) {
                if (Math.abs(pixels[i] - 31) < 40 && Math.abs(pixels[i + 1] - 111) < 40 &&
                    Math.abs(pixels[i + 2] - 235) < 40 && pixels[i + 3] > 128) {
                  xs.push(box.left + ((i / 4) % canvas.width) / scale);
                }
              }
              if (xs.length === 0) return false;
              return { count: xs.length, first: Math.min(...xs), left: plot.left, right: plot.right };
            })()`,
            undefined,
            wait,
          )
        ).jsonValue()) as { count: number; first: number; left: number; right: number };
        const at = (drawn.first - drawn.left) / (drawn.right - drawn.left);
        t.log(`${label}: ${drawn.count} pixels drawn from ${(at * 100).toFixed(1)} % of the axis`);
        t.true(at > 0.9, `${label}: the averages of the last minutes lie at the right end`);
        await germanAxis(label);
      }
      await expectAccessible(t, page, 'history chart, German');
      await shot(page, '03b-history-de');

      // A text tag: its values are listed (newest first), not charted.
      await page.goto(`${url}/#/tags?filter=MachineState`, wait);
      await page.locator('button.tree-tag[data-path="Demo/Line1/MachineState"]').click(wait);
      await history
        .locator('.history-status', { hasText: 'Text values are listed, not charted' })
        .waitFor(wait);
      const table = history.getByRole('table', { name: /Demo\/Line1\/MachineState/ });
      await table.waitFor(wait);
      const values = await table.locator('tbody td.history-value').allInnerTexts();
      // The state's words (and "—" for a sample without a value, such as the one before the
      // first read).
      t.true(
        values.some((value) => /^(Idle|Running|Stopped)$/.test(value)),
        values.join(', '),
      );
      for (const value of values) t.regex(value, /^(Idle|Running|Stopped|—)$/);
      t.regex(
        await table.locator('tbody tr th').first().innerText(),
        /^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}:\d{2}$/,
      );
      t.is(await history.locator('canvas').count(), 0);
      t.true(await history.getByLabel('Series').isDisabled());
      await expectAccessible(t, page, 'history of a text tag');
      await shot(page, '03c-history-text');
    },
  );

  test.serial(
    'Drivers: state, last error and counters of each driver, and a link to its tags',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      await page.goto(`${suite.gateway().url}/#/drivers`, wait);
      const demo = page.locator('article.card', {
        has: page.getByRole('heading', { name: /^Demo/ }),
      });
      await demo.locator('.status', { hasText: 'Running' }).waitFor(wait);
      await demo.getByText('Last error').waitFor(wait);
      await page
        .locator('article.card', { has: page.getByRole('heading', { name: /^Vehicle/ }) })
        .waitFor(wait);
      await expectAccessible(t, page, 'drivers page');
      await shot(page, '04-drivers');
      await demo.getByRole('link', { name: 'Show the tags of Demo' }).click(wait);
      await page.locator('button.tree-tag[data-path="Demo/Line1/Temperature"]').waitFor(wait);
      t.is(await page.getByLabel('Filter tags').inputValue(), 'Demo/');
    },
  );

  test.serial(
    'Publishers: an empty destination is refused with the spec message at the field',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      await page.goto(`${suite.gateway().url}/#/publishers`, wait);
      await page.getByRole('link', { name: 'New webhook publisher' }).click(wait);
      await page.getByLabel('Name').fill('no-destination', wait);
      // The spec's defaults are filled in.
      t.is(await page.getByLabel('Update interval (seconds)').inputValue(), '10');
      t.is(await page.getByLabel('Logging mode').inputValue(), 'Snapshot');
      t.is(await page.getByLabel('Authentication').inputValue(), 'None');
      t.true(await page.getByLabel(/Auto Connect/).isChecked());
      await page.getByRole('checkbox', { name: 'Line1' }).check(wait);
      await page.getByRole('button', { name: 'Create' }).click(wait);
      const message = page.locator('#destinationUrl-error');
      await message.waitFor(wait);
      t.is(await message.innerText(), 'You must provide a webhook destination URL.');
      t.is(await page.getByLabel('Destination URL').getAttribute('aria-invalid'), 'true');
      // Bearer token mode needs its token: its own message at its own field.
      await page.getByLabel('Authentication').selectOption('Bearer token', wait);
      await page.getByRole('button', { name: 'Create' }).click(wait);
      await page.locator('#authentication\\.bearerToken-error').waitFor(wait);
      await expectAccessible(t, page, 'publisher form with errors');
      await shot(page, '05-publisher-form-errors');
    },
  );

  test.serial(
    'Publishers: status goes Error while the receiver is down and On once it is back; credentials stay masked',
    async (t) => {
      t.timeout(180_000);
      const page = adminPage();
      const receiver = await startReceiver(t, { down: true });
      await page.goto(`${suite.gateway().url}/#/publishers/new`, wait);
      await page.getByLabel('Name').fill('plant-hook', wait);
      await page.getByLabel('Destination URL').fill(receiver.url, wait);
      await page.getByLabel('Authentication').selectOption('Bearer token', wait);
      await page.getByLabel('Bearer token').fill('s3cret-token', wait);
      await page.getByRole('checkbox', { name: 'Line1' }).check(wait);
      await page.getByLabel('Update interval (seconds)').fill('1', wait);
      await page.getByRole('button', { name: 'Create' }).click(wait);

      const row = page.locator('tr[data-publisher="plant-hook"]');
      const status = row.locator('[data-testid="publisher-status"]');
      await row.waitFor(wait);
      // The destination is a secret: the list shows the mask, never the address.
      t.is(await row.locator('code').innerText(), '********');
      // Three failed attempts (waits of 1 s and 2 s) make it Error.
      await status.filter({ hasText: /^Error$/ }).waitFor({ timeout: 60_000 });
      await row.getByText('Failing:').waitFor(wait);
      await row.getByText('Webhook delivery failed - see log for details.').waitFor(wait);
      await expectAccessible(t, page, 'publishers page');
      await shot(page, '06-publisher-error');

      // Its health tag on the Tags page: the value's meaning (Error) in red, and the sample's
      // quality (Good: the status itself was read) no green badge beside it.
      const { url } = suite.gateway();
      await page.goto(`${url}/#/tags?filter=plant-hook/Status`, wait);
      const healthRow = page.locator('button.tree-tag[data-path="Publishers/plant-hook/Status"]');
      const healthValue = healthRow.locator('.tree-value', { hasText: /^Error$/ });
      await healthValue.waitFor(wait);
      t.true(reddish(await computedColour(healthValue, 'color')), 'Error reads red');
      for (const where of [healthRow, page.locator('.tag-detail')]) {
        if (where !== healthRow) await healthRow.click(wait);
        const badge = where.locator('.quality', { hasText: 'Good' });
        await badge.waitFor(wait);
        for (const property of ['color', 'background-color']) {
          const colour = await computedColour(badge, property);
          t.false(greenish(colour), `Good badge ${property} rgb(${colour}) beside Error`);
        }
      }
      await page
        .locator('.tag-detail [data-testid="tag-value"]', { hasText: /^Error$/ })
        .waitFor(wait);
      t.true(
        reddish(
          await computedColour(page.locator('.tag-detail [data-testid="tag-value"]'), 'color'),
        ),
      );
      await expectAccessible(t, page, 'health tag on the tags page');
      await page.goto(`${url}/#/publishers`, wait);
      await row.waitFor(wait);

      await receiver.up();
      await status.filter({ hasText: /^On$/ }).waitFor({ timeout: 60_000 });
      await row.getByText('Delivering', { exact: true }).waitFor(wait);
      t.is(receiver.requests.at(-1)?.headers.authorization, 'Bearer s3cret-token');

      // Editing shows the masks; saving them unchanged keeps the stored secrets.
      await row.getByRole('link', { name: /Edit/ }).click(wait);
      t.is(await page.getByLabel('Destination URL').inputValue(), '********');
      t.is(await page.getByLabel('Bearer token').inputValue(), '********');
      await page.getByLabel('Update interval (seconds)').fill('2', wait);
      await page.getByRole('button', { name: 'Save' }).click(wait);
      await row.waitFor(wait);
      const before = receiver.requests.length;
      await receiver.waitForRequests(before + 1, 30_000);
      t.is(receiver.requests.at(-1)?.headers.authorization, 'Bearer s3cret-token');

      // Stop and Start.
      await row.getByRole('button', { name: /^Stop/ }).click(wait);
      await status.filter({ hasText: /^Off$/ }).waitFor(wait);
      await row.getByRole('button', { name: /^Start/ }).click(wait);
      await status.filter({ hasText: /^On$/ }).waitFor(wait);

      // Deleted from its edit form, asked twice.
      await row.getByRole('link', { name: /Edit/ }).click(wait);
      await page.getByRole('button', { name: 'Delete publisher' }).click(wait);
      await page.getByRole('button', { name: 'Confirm: delete plant-hook' }).click(wait);
      await page.getByRole('heading', { name: 'Publishers' }).waitFor(wait);
      await row.waitFor({ state: 'detached', ...wait });
    },
  );

  test.serial(
    'phone width (390×844): Publishers fits the screen; a tag’s detail opens in view',
    async (t) => {
      t.timeout(120_000);
      const { url } = suite.gateway();
      const page = await suite.newPage(t, {
        viewport: { width: 390, height: 844 },
      });
      await signIn(page, suite.gateway(), 'admin', adminPassword);
      const pageWidth = () => page.evaluate('document.documentElement.scrollWidth');

      await page.goto(`${url}/#/publishers`, wait);
      const row = page.locator('tr[data-publisher="demo-receiver"]');
      await row.waitFor(wait);
      t.is(await pageWidth(), 390, 'the Publishers page is as wide as the phone');
      // Everything of the row is reachable without sideways scrolling, down to its actions.
      const edit = await row.getByRole('link', { name: /Edit/ }).boundingBox();
      t.true(edit !== null && edit.x >= 0 && edit.x + edit.width <= 390, JSON.stringify(edit));
      await expectAccessible(t, page, 'publishers page at phone width');
      await shot(page, '06b-publishers-phone');

      await page.goto(`${url}/#/tags?filter=Line1/Temperature`, wait);
      await page.locator('button.tree-tag[data-path="Demo/Line1/Temperature"]').click(wait);
      const value = page.locator('.tag-detail').getByTestId('tag-value');
      await value.filter({ hasText: /°C/ }).waitFor(wait);
      // The detail comes into view on its own (it lies below the tag list on a phone).
      const inView = `(() => {
        const box = document.querySelector('.tag-detail [data-testid="tag-value"]').getBoundingClientRect();
        return box.top >= 0 && box.bottom <= innerHeight;
      })()`;
      await page.waitForFunction(inView, undefined, wait).catch(() => undefined);
      const box = await value.boundingBox();
      t.true(
        box !== null && box.y >= 0 && box.y + box.height <= 844,
        `the value at ${JSON.stringify(box)}`,
      );
      t.is(await pageWidth(), 390, 'the Tags page is as wide as the phone');
      await shot(page, '06c-tag-detail-phone');
    },
  );

  test.serial('Collections: create, edit the members, delete', async (t) => {
    t.timeout(120_000);
    const page = adminPage();
    await page.goto(`${suite.gateway().url}/#/collections`, wait);
    await page.getByRole('link', { name: 'New collection' }).click(wait);
    await page.getByLabel('Name').fill('Pressures', wait);
    await page.getByLabel('Members').fill('Demo/Line1/Pressure', wait);
    await page.getByRole('button', { name: 'Create' }).click(wait);
    const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'Pressures' }) });
    await row.getByText('Demo/Line1/Pressure').waitFor(wait);
    await expectAccessible(t, page, 'collections page');
    await shot(page, '07-collections');

    await row.getByRole('link', { name: /Edit/ }).click(wait);
    await page.getByLabel('Members').fill('Demo/Line1/Pressure\nDemo/Line1/Valve', wait);
    await expectAccessible(t, page, 'collection form');
    await page.getByRole('button', { name: 'Save' }).click(wait);
    await row.getByText('Demo/Line1/Valve').waitFor(wait);

    await row.getByRole('button', { name: /^Delete/ }).click(wait);
    await row.getByRole('button', { name: /^Confirm delete/ }).click(wait);
    await page.getByText('Collection Pressures deleted.').waitFor(wait);
    await row.waitFor({ state: 'detached', ...wait });
  });

  test.serial(
    'Users & Groups: a service token generated under User Actions works with curl',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      const { url } = suite.gateway();
      await page.goto(`${url}/#/users`, wait);
      await page.getByRole('rowheader', { name: 'admin' }).waitFor(wait);
      await expectAccessible(t, page, 'users page');
      await shot(page, '08-users');
      await page.getByRole('link', { name: 'New account' }).click(wait);
      await page.getByLabel('Account name').fill('scada', wait);
      await page.getByRole('radio', { name: /Service account/ }).check(wait);
      await page.getByRole('button', { name: 'Create account' }).click(wait);
      await page.getByRole('heading', { name: /^scada/ }).waitFor(wait);

      await page.getByRole('tab', { name: 'User Actions' }).click(wait);
      await page.getByRole('button', { name: 'Generate token' }).click(wait);
      await page.getByRole('button', { name: 'Generate and void the old token' }).click(wait);
      const field = page.getByLabel('Service token (shown once)');
      await field.waitFor(wait);
      const token = await field.inputValue();
      t.regex(token, /^eyJ/);
      await page.getByRole('button', { name: 'Copy' }).click(wait);
      await page.getByText('Copied to the clipboard.').waitFor(wait);
      t.is(await page.evaluate('navigator.clipboard.readText()'), token);
      await expectAccessible(t, page, 'user actions');
      await shot(page, '09-user-actions-token');

      const { stdout } = await promisify(execFile)('curl', [
        '-s',
        '-w',
        '\n%{http_code}',
        '-H',
        `Authorization: Bearer ${token}`,
        `${url}/api/v2/Tags/Sample/Demo/Line1/Temperature`,
      ]);
      const [body = '', code] = stdout.split('\n');
      t.is(code, '200');
      t.is(JSON.parse(body).fullTagId, 'Demo/Line1/Temperature');
    },
  );

  test.serial('a Viewer sees no Users page, and the server refuses it when it tries', async (t) => {
    t.timeout(120_000);
    const page = adminPage();
    const { url } = suite.gateway();
    await createAccount(page, suite.gateway(), 'watcher', 'watcher first password');
    t.true(await page.getByRole('checkbox', { name: 'Viewers' }).isChecked());

    const viewer = await suite.newPage(t, {
      viewport: { width: 390, height: 844 },
    });
    const viewerWatch = watchPage(viewer);
    await signIn(viewer, suite.gateway(), 'watcher', 'watcher first password');
    const nav = viewer.getByRole('navigation', { name: 'Console pages' });
    await nav.getByRole('link', { name: 'Tags' }).waitFor(wait);
    // The pages of TagView, AlertView and AssistantUse only.
    t.deepEqual(await nav.getByRole('link').allInnerTexts(), [
      'Tags',
      'Trends',
      'Alarms',
      'Assistant',
    ]);
    await viewer.locator('button.tree-folder', { hasText: 'Demo' }).waitFor(wait);
    await expectAccessible(t, viewer, 'tags page at phone width');
    await shot(viewer, '10-viewer-phone');

    await viewer.goto(`${url}/#/users`, wait);
    await viewer.getByText('This account may not open that page.').waitFor(wait);
    // fetch in the page: the Viewer's own cookie session, as the console would send it.
    const refused = (await viewer.evaluate(
      "fetch('/api/v2/Users').then(async (response) => ({ status: response.status, body: await response.json() }))",
    )) as { status: number; body: { code: string } };
    t.is(refused.status, 403);
    t.is(refused.body.code, 'forbidden');
    t.deepEqual(viewerWatch.cspViolations(), []);

    // Two-factor enrolled (as `tagd users 2fa enable` does): the Viewer's sign-in ends, the
    // console says so on the sign-in page, and signing in again asks for the code.
    await viewer.goto(`${url}/#/tags`, wait);
    await viewer.locator('button.tree-folder', { hasText: 'Demo' }).waitFor(wait);
    const secret = await enrolTwoFactor(suite.gateway().stateDir, 'watcher');
    await viewer.getByText('Your session has ended. Sign in again.').waitFor(wait);
    await viewer.getByLabel('Username').fill('watcher', wait);
    await viewer.getByLabel('Password', { exact: true }).fill('watcher first password', wait);
    await viewer.getByRole('button', { name: 'Sign in' }).click(wait);
    await viewer.getByLabel('Two-factor code').waitFor(wait);
    await expectAccessible(t, viewer, 'two-factor step');
    await shot(viewer, '11-two-factor');
    await viewer.getByLabel('Two-factor code').fill(totpCode('watcher', secret, Date.now()), wait);
    await viewer.getByRole('button', { name: 'Verify code' }).click(wait);
    await viewer.locator('button.tree-folder', { hasText: 'Demo' }).waitFor(wait);
  });

  test.serial(
    'Users & Groups: roles, disable and enable, password and two-factor resets',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      await page.goto(`${suite.gateway().url}/#/users/watcher`, wait);
      const facts = page.locator('.facts');
      await facts.locator('dd', { hasText: /^On$/ }).waitFor(wait);
      await expectAccessible(t, page, 'account tab');
      await shot(page, '12-account');

      await page.getByRole('checkbox', { name: 'Operators' }).check(wait);
      await page.getByRole('button', { name: 'Save roles' }).click(wait);
      await page.getByText('Roles saved.').waitFor(wait);
      await page.reload({ waitUntil: 'load', ...wait });
      t.true(await page.getByRole('checkbox', { name: 'Operators' }).isChecked(wait));

      await page.getByRole('button', { name: 'Disable account' }).click(wait);
      await facts.locator('dd', { hasText: /^Disabled$/ }).waitFor(wait);
      await page.getByRole('button', { name: 'Enable account' }).click(wait);
      await facts.locator('dd', { hasText: /^Enabled$/ }).waitFor(wait);

      await page.getByRole('button', { name: 'Reset two-factor' }).click(wait);
      await facts.locator('dd', { hasText: /^Off$/ }).waitFor(wait);

      await page.getByRole('button', { name: 'Reset password' }).click(wait);
      const oneTime = page.getByLabel('One-time password (shown once)');
      await oneTime.waitFor(wait);
      watcherOneTimePassword = await oneTime.inputValue();
      t.true(watcherOneTimePassword.length >= 10);
      await facts.locator('dd', { hasText: 'password change due' }).waitFor(wait);
    },
  );

  test.serial(
    'an Operator, after the forced change of a reset password, reads publishers but cannot change them',
    async (t) => {
      t.timeout(120_000);
      const { url } = suite.gateway();
      const page = await suite.newPage(t, {
        viewport: { width: 1366, height: 768 },
      });
      await page.goto(`${url}/`, { waitUntil: 'load', ...wait });
      await page.getByLabel('Username').fill('watcher', wait);
      await page.getByLabel('Password', { exact: true }).fill(watcherOneTimePassword, wait);
      await page.getByRole('button', { name: 'Sign in' }).click(wait);
      await page.getByLabel('New password', { exact: true }).fill('watcher third password', wait);
      await page.getByLabel('Repeat the new password').fill('watcher third password', wait);
      await page.getByRole('button', { name: 'Change password' }).click(wait);
      const nav = page.getByRole('navigation', { name: 'Console pages' });
      await nav.getByRole('link', { name: 'Publishers' }).waitFor(wait);
      t.deepEqual(await nav.getByRole('link').allInnerTexts(), [
        'Tags',
        'Trends',
        'Alarms',
        'Drivers',
        'Publishers',
        'Assistant',
      ]);

      await nav.getByRole('link', { name: 'Publishers' }).click(wait);
      const row = page.locator('tr[data-publisher="demo-receiver"]');
      await row.waitFor(wait);
      t.is(await page.getByRole('link', { name: 'New webhook publisher' }).count(), 0);
      t.is(await row.getByRole('button').count(), 0, 'no Start, Stop or Edit');
      await expectAccessible(t, page, 'publishers page, read only');
      const refused = (await page.evaluate(
        `fetch('/api/v2/Publishers/Webhooks/demo-receiver/Stop', {
        method: 'POST',
        headers: { 'X-CSRF-Token': document.cookie.split('tagd_csrf=')[1]?.split(';')[0] ?? '' },
      }).then(async (response) => ({ status: response.status, body: await response.json() }))`,
      )) as { status: number; body: { code: string } };
      t.is(refused.status, 403);
      t.is(refused.body.code, 'forbidden');
    },
  );

  test.serial('the CSP blocked nothing the console needed, and it signs out', async (t) => {
    const page = adminPage();
    t.deepEqual((adminWatch as ReturnType<typeof watchPage>).cspViolations(), []);
    await page.getByRole('button', { name: 'Sign out' }).click(wait);
    await page.getByRole('button', { name: 'Sign in' }).waitFor(wait);
    const cookies = await page.context().cookies();
    t.deepEqual(
      cookies.map((cookie) => cookie.name),
      [],
    );
  });

  test.serial(
    'when the gateway stops, the Tags page says its values are the last received',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      await signIn(page, suite.gateway(), 'admin', adminPassword);
      await page.goto(`${suite.gateway().url}/#/tags`, wait);
      await page.getByText('Live', { exact: true }).waitFor(wait);
      await suite.gateway().daemon.stop();
      await page
        .getByText(
          'Not receiving updates from the gateway: the values shown are the last received.',
        )
        .waitFor(wait);
      await page.locator('.tag-browser.feed-lost').waitFor(wait);
      t.is(await page.locator('.feed').innerText(), 'Reconnecting…');
    },
  );
}
