import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { type Browser, chromium, type Page } from 'playwright-core';
import { initialAdminPasswordFile } from '../../src/auth/account-service.js';
import { systemClock } from '../../src/clock.js';
import { Daemon } from '../../src/daemon.js';
import { demoProfileDocument } from '../../src/demo-profile.js';
import { chromiumPath } from './chromium.js';
import { consoleBuild } from './console-build.js';
import { captureLogs } from './log-capture.js';

/** Generous waits: a cold Chromium on a loaded 2-core CI box renders slowly. */
export const wait = { timeout: 30_000 };

/** A demo daemon on the real clock (its simulator ticks every second) serving a fresh console build. */
export interface ConsoleDaemon {
  daemon: Daemon;
  url: string;
  stateDir: string;
  folder: string;
  logs: ReturnType<typeof captureLogs>;
  /** The one-time password of `admin`. */
  initialPassword(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts the demo profile (changed by `edit`) with the console, on 127.0.0.1 port 0; the console
 * comes from a fresh build unless `consoleDir` names another folder.
 */
export async function startConsoleDaemon(
  edit: (profile: Record<string, unknown>) => void = () => undefined,
  consoleDir?: string,
): Promise<ConsoleDaemon> {
  const outDir = consoleDir ?? (await consoleBuild()).outDir;
  const folder = await mkdtemp(join(tmpdir(), 'tagd-console-daemon-'));
  const profile = await demoProfileDocument();
  edit(profile);
  const profileFile = join(folder, 'profile.json');
  await writeFile(profileFile, JSON.stringify(profile));
  const stateDir = join(folder, 'state');
  const logs = captureLogs('info');
  const daemon = new Daemon({
    profileFile,
    stateDir,
    logger: logs.logger,
    clock: systemClock,
    listen: { host: '127.0.0.1', port: 0 },
    extensionsListen: { host: '127.0.0.1', port: 0 },
    consoleDir: outDir,
    // As `tagd start` does: the Events page shows what this logger logs.
    recentEvents: logs.recentEvents,
  });
  await daemon.start();
  return {
    daemon,
    url: daemon.url() as string,
    stateDir,
    folder,
    logs,
    initialPassword: async () =>
      (await readFile(join(stateDir, initialAdminPasswordFile), 'utf8')).trim(),
    stop: async () => {
      await daemon.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/** Headless Chromium for a whole test file (ava's hooks cannot own t.teardown resources). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 60_000,
  });
}

/**
 * Records what a page complains about: console errors, page errors and CSP refusals, so a
 * failing step shows why, and a test can require that the CSP blocked nothing.
 */
export function watchPage(page: Page): { errors: string[]; cspViolations: () => string[] } {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return {
    errors,
    cspViolations: () =>
      errors.filter((text) =>
        /Content Security Policy|Refused to (load|execute|apply)/i.test(text),
      ),
  };
}

const axeSource = readFile(new URL(import.meta.resolve('axe-core/axe.min.js')), 'utf8');

/** An axe-core result, as much as the tests read. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page and returns its serious and critical violations. The script is
 * evaluated over the DevTools protocol, which the page's CSP (no inline script) does not govern.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  // Page source text: this program has no DOM types.
  const loaded = await page.evaluate("'axe' in window");
  if (!loaded) await page.evaluate(await axeSource);
  const violations = (await page.evaluate(`axe
    .run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map(({ id, impact, help, nodes }) => ({
      id,
      impact,
      help,
      nodes: nodes.map((node) => ({ target: node.target })),
    })))`)) as AxeViolation[];
  return violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
}

/** Folder for screenshots a person may look at (not committed): `<tmp>/tagd-console-screenshots`. */
export async function screenshotFolder(): Promise<string> {
  const folder = join(tmpdir(), 'tagd-console-screenshots');
  await mkdir(folder, { recursive: true });
  return folder;
}

/** Asserts that axe finds no serious or critical violation in the page as it is now. */
export async function expectAccessible(
  t: ExecutionContext,
  page: Page,
  where: string,
): Promise<void> {
  const violations = await seriousAxeViolations(page);
  t.is(describeViolations(t, where, violations), '', `${where}: serious or critical violations`);
}

/** Asserts that the page is no wider than its window (no horizontal scrolling). */
export async function expectNoOverflow(
  t: ExecutionContext,
  page: Page,
  where: string,
): Promise<void> {
  const widths = (await page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  )) as { scroll: number; client: number };
  t.true(widths.scroll <= widths.client, `${where}: ${widths.scroll} px wide in ${widths.client}`);
}

/** Logs a violation list readably. */
export function describeViolations(
  t: ExecutionContext,
  where: string,
  list: AxeViolation[],
): string {
  const text = list
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    )
    .join('\n');
  if (text) t.log(`${where}:\n${text}`);
  return text;
}

/** Signs `admin` in for the first time on a fresh daemon, choosing `password` as asked. */
export async function firstAdminSignIn(
  page: Page,
  gateway: ConsoleDaemon,
  password: string,
): Promise<void> {
  await page.goto(`${gateway.url}/`, { waitUntil: 'load', ...wait });
  await page.getByLabel('Username').fill('admin', wait);
  await page.getByLabel('Password', { exact: true }).fill(await gateway.initialPassword(), wait);
  await page.getByRole('button', { name: 'Sign in' }).click(wait);
  await page.getByLabel('New password', { exact: true }).fill(password, wait);
  await page.getByLabel('Repeat the new password').fill(password, wait);
  await page.getByRole('button', { name: 'Change password' }).click(wait);
  await page.getByRole('navigation', { name: 'Console pages' }).waitFor(wait);
}

/** Signs `username` in (an account with no step pending) from the console's first page. */
export async function signIn(
  page: Page,
  gateway: ConsoleDaemon,
  username: string,
  password: string,
): Promise<void> {
  await page.goto(`${gateway.url}/`, { waitUntil: 'load', ...wait });
  await page.getByLabel('Username').fill(username, wait);
  await page.getByLabel('Password', { exact: true }).fill(password, wait);
  await page.getByRole('button', { name: 'Sign in' }).click(wait);
  await page.getByRole('navigation', { name: 'Console pages' }).waitFor(wait);
}

/**
 * Creates the user account `username` with `password` on the Users page of `page` (signed in
 * as an administrator), in `groups` besides the form's default; waits until its page opens.
 */
export async function createAccount(
  page: Page,
  gateway: ConsoleDaemon,
  username: string,
  password: string,
  groups: string[] = [],
): Promise<void> {
  await page.goto(`${gateway.url}/#/users/new`, wait);
  await page.getByLabel('Account name').fill(username, wait);
  await page.getByLabel('Initial password').fill(password, wait);
  for (const group of groups) await page.getByRole('checkbox', { name: group }).check(wait);
  await page.getByRole('button', { name: 'Create account' }).click(wait);
  await page.getByRole('heading', { name: new RegExp(`^${username}`) }).waitFor(wait);
}
