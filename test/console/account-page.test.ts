/**
 * My account and Events (docs/console.md) in headless Chromium against an in-process demo
 * daemon, as a person uses them: the header names the gateway's host and version on every page;
 * a password changed on My account is the one the next sign-in takes; two-factor is enrolled by
 * reading the setup link under the QR code into an authenticator (here: otpauth in the test),
 * asked at the next sign-in, and removed again; the Events page shows a failed sign-in, fetched
 * while the page is open. axe finds nothing serious and nothing overflows at 1920×1080,
 * 1366×768 and 390 px in every built-in theme. Screenshots: `<tmp>/tagd-console-screenshots/`.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { URI } from 'otpauth';
import type { Page } from 'playwright-core';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import { version } from '../../src/version.js';
import {
  expectAccessible,
  expectNoOverflow,
  screenshotFolder,
  wait,
  watchPage,
} from '../helpers/console-session.js';
import { adminPassword, type ConsoleSuite, consoleSuite } from '../helpers/console-suite.js';

const secondPassword = 'another long admin password';

const sizes = [
  { width: 1920, height: 1080 },
  { width: 1366, height: 768 },
  { width: 390, height: 844 },
] as const;

/** The one page of the file's tests, admin signed in (a later test signs in again on it). */
let page: Page | undefined;
/** The admin password in force. */
let password = adminPassword;

const suite = consoleSuite('account-page.test.ts', 'My account and Events in Chromium', {
  started: async () => {
    const context = await (suite as ConsoleSuite).browser().newContext({
      viewport: { width: 1366, height: 768 },
    });
    page = await context.newPage();
    watchPage(page);
    await (suite as ConsoleSuite).signInAdmin(page);
  },
});

function thePage(): Page {
  if (!page) throw new Error('no page');
  return page;
}

function url(): string {
  return (suite as ConsoleSuite).gateway().url;
}

/**
 * The authenticator's code for the first time step after `usedStep` that the server accepts
 * (it takes the steps around now, ±1, each once), waiting for the clock when that is later.
 */
async function nextCode(uri: string, usedStep: number): Promise<{ code: string; step: number }> {
  const totp = URI.parse(uri);
  const period = 30_000;
  const step = Math.max(usedStep + 1, Math.floor(Date.now() / period));
  // A step more than one ahead of now is refused: wait until it is at most one ahead.
  const readyAt = (step - 1) * period;
  if (Date.now() < readyAt)
    await new Promise((resolve) => setTimeout(resolve, readyAt - Date.now()));
  return { code: totp.generate({ timestamp: step * period }), step };
}

async function openAccount(): Promise<void> {
  const current = thePage();
  await current.locator('header').getByRole('link', { name: 'admin' }).click(wait);
  await current.getByRole('heading', { name: 'My account' }).waitFor(wait);
}

async function signOut(): Promise<void> {
  await thePage().getByRole('button', { name: 'Sign out' }).click(wait);
  await thePage().getByRole('button', { name: 'Sign in' }).waitFor(wait);
}

async function signInWithPassword(): Promise<void> {
  const current = thePage();
  await current.getByLabel('Username').fill('admin', wait);
  await current.getByLabel('Password', { exact: true }).fill(password, wait);
  await current.getByRole('button', { name: 'Sign in' }).click(wait);
}

if (suite) {
  test.serial('the header names the gateway host and tagd version on every page', async (t) => {
    const current = thePage();
    for (const view of ['tags', 'users', 'events', 'account']) {
      await current.goto(`${url()}/#/${view}`, wait);
      const info = current.locator('header .gateway-info');
      await info.waitFor(wait);
      t.is(await info.textContent(), `${hostname()} · tagd ${version}`, view);
    }
  });

  test.serial('a password changed on My account is the one the next sign-in takes', async (t) => {
    const current = thePage();
    await current.goto(`${url()}/#/tags`, wait);
    await openAccount();
    await current.getByLabel('Current password').fill('not the password', wait);
    await current.getByLabel('New password', { exact: true }).fill(secondPassword, wait);
    await current.getByLabel('Repeat the new password').fill(secondPassword, wait);
    await current.getByRole('button', { name: 'Change password' }).click(wait);
    // A wrong current password is said at its field, and the session goes on.
    await current.getByText('The current password is wrong.').waitFor(wait);
    t.true(await current.getByRole('heading', { name: 'My account' }).isVisible());

    await current.getByLabel('Current password').fill(password, wait);
    await current.getByRole('button', { name: 'Change password' }).click(wait);
    await current.getByText('Password changed. Your other sessions have ended.').waitFor(wait);
    password = secondPassword;
    await signOut();
    await signInWithPassword();
    await current.getByRole('navigation', { name: 'Console pages' }).waitFor(wait);
    t.pass();
  });

  test.serial(
    'two-factor: enrolled from the QR code setup link, asked at sign-in, removed',
    async (t) => {
      t.timeout(180_000);
      const current = thePage();
      await openAccount();
      await current.getByText('Two-factor is off.', { exact: false }).waitFor(wait);
      const twoFactor = current.getByRole('region', { name: 'Two-factor' });
      await twoFactor.getByLabel('Password', { exact: true }).fill('wrong password here', wait);
      await twoFactor.getByRole('button', { name: 'Set up two-factor' }).click(wait);
      await twoFactor.getByText('Wrong password.').waitFor(wait);

      await twoFactor.getByLabel('Password', { exact: true }).fill(password, wait);
      await twoFactor.getByRole('button', { name: 'Set up two-factor' }).click(wait);
      const qr = twoFactor.getByRole('img', { name: /QR code of the two-factor secret/ });
      await qr.waitFor(wait);
      const drawnWidth = await qr.evaluate(
        (image: unknown) => (image as { naturalWidth: number }).naturalWidth,
      );
      t.true(drawnWidth > 0, 'the QR code is drawn');
      const uri = (await current.getByTestId('otpauth-uri').textContent()) ?? '';
      t.regex(uri, /^otpauth:\/\/totp\/tagd:admin\?/);
      const secret = new URL(uri).searchParams.get('secret') ?? '';
      t.true(await twoFactor.getByText(secret, { exact: true }).isVisible(), 'the secret as text');
      await expectAccessible(t, current, 'enrolment with the QR code');
      await current.screenshot({ path: join(await screenshotFolder(), 'account-enrol.png') });

      const wrong = await nextCode(uri, 0);
      await twoFactor
        .getByLabel('Code from the authenticator app')
        .fill(wrong.code === '000000' ? '111111' : '000000', wait);
      await twoFactor.getByRole('button', { name: 'Confirm code' }).click(wait);
      await twoFactor.getByText(/^Wrong code/).waitFor(wait);

      const confirming = await nextCode(uri, 0);
      await twoFactor.getByLabel('Code from the authenticator app').fill(confirming.code, wait);
      await twoFactor.getByRole('button', { name: 'Confirm code' }).click(wait);
      await current.getByText('Two-factor is on. Your other sessions have ended.').waitFor(wait);
      // The console that enrolled is still signed in.
      await current.goto(`${url()}/#/users`, wait);
      await current.getByRole('heading', { name: 'Users & Groups' }).first().waitFor(wait);
      const row = current.getByRole('row', { name: /admin/ });
      t.is(await row.locator('td').last().textContent(), 'On', 'the Users page agrees');

      await signOut();
      await signInWithPassword();
      const signingIn = await nextCode(uri, confirming.step);
      await current.getByLabel('Two-factor code').fill(signingIn.code, wait);
      await current.getByRole('button', { name: 'Verify code' }).click(wait);
      await current.getByRole('navigation', { name: 'Console pages' }).waitFor(wait);

      await openAccount();
      const removing = await nextCode(uri, signingIn.step);
      await twoFactor.getByLabel('Password', { exact: true }).fill(password, wait);
      await twoFactor.getByLabel('Code from the authenticator app').fill(removing.code, wait);
      await twoFactor.getByRole('button', { name: 'Remove two-factor' }).click(wait);
      await current.getByText('Two-factor is off. Your other sessions have ended.').waitFor(wait);
      // This browser's session outlived the voiding of the account's tokens: its alarm feed and
      // polls, cut by it, renewed with the new cookies.
      await current.goto(`${url()}/#/events`, wait);
      await current.getByRole('heading', { name: 'Events' }).waitFor(wait);
      t.true(await current.locator('header .gateway-info').isVisible());
      await signOut();
      await signInWithPassword();
      await current.getByRole('navigation', { name: 'Console pages' }).waitFor(wait);
    },
  );

  test.serial('the Events page shows a failed sign-in made while it is open', async (t) => {
    const current = thePage();
    await current.goto(`${url()}/#/events`, wait);
    await current.getByRole('heading', { name: 'Events' }).waitFor(wait);
    await current
      .getByRole('status')
      .filter({ hasText: /events\.$/ })
      .waitFor(wait);
    const failed = await fetch(`${url()}/api/v2/Users/Authenticate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'mallory', password: 'guessing-away' }),
    });
    t.is(failed.status, 401);
    await current.getByLabel('Text').fill('mallory', wait);
    const row = current.getByRole('row', { name: /sign-in failed/ });
    await row.first().waitFor(wait);
    const text = (await row.first().textContent()) ?? '';
    t.regex(text, /Warning/);
    t.regex(text, /username: mallory/);
    t.notRegex(text, /guessing-away/, 'no password in the events');
    await current.getByLabel('Kind').selectOption('log', wait);
    await row.first().waitFor({ state: 'detached', ...wait });
    await current.getByLabel('Kind').selectOption('', wait);
    await current.getByLabel('Level').selectOption('error', wait);
    await row.first().waitFor({ state: 'detached', ...wait });
    await current.getByLabel('Level').selectOption('warn', wait);
    await row.first().waitFor(wait);
  });

  test.serial(
    'axe finds nothing and nothing overflows at 1920, 1366 and 390 px in every theme',
    async (t) => {
      t.timeout(600_000);
      const current = thePage();
      const views = [
        ['account', 'My account'],
        ['events', 'Events'],
      ] as const;
      for (const theme of builtInThemes) {
        await current.setViewportSize(sizes[1]);
        await current.goto(`${url()}/#/events`, wait);
        await current.locator('header').getByLabel('Theme').selectOption(theme.name, wait);
        await current
          .locator(`html[data-theme="${theme.name}"]`)
          .waitFor({ state: 'attached', ...wait });
        for (const size of sizes) {
          await current.setViewportSize(size);
          for (const [view, heading] of views) {
            await current.goto(`${url()}/#/${view}`, wait);
            await current.getByRole('heading', { name: heading, exact: true }).waitFor(wait);
            await current.locator('header .gateway-info').waitFor(wait);
            if (view === 'events') {
              await current
                .getByRole('status')
                .filter({ hasText: /events\.$/ })
                .waitFor(wait);
            } else {
              await current.getByRole('heading', { name: 'Two-factor' }).waitFor(wait);
            }
            const where = `${theme.name}, ${size.width}×${size.height}, #/${view}`;
            await expectAccessible(t, current, where);
            await expectNoOverflow(t, current, where);
            await current.screenshot({
              path: join(
                await screenshotFolder(),
                `account-${view}-${theme.name}-${size.width}.png`,
              ),
              fullPage: true,
            });
          }
        }
      }
      await current.locator('header').getByLabel('Theme').selectOption('', wait);
    },
  );
}
