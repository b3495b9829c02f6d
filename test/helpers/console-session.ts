import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { initialAdminPasswordFile } from '../../src/auth/account-service.js';
import { systemClock } from '../../src/clock.js';
import { Daemon } from '../../src/daemon.js';
import { demoProfileDocument } from '../../src/demo-profile.js';
import { chromiumPath, chromiumSkipReason } from './chromium.js';
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

/** The password the console tests give `admin` at its first sign-in. */
export const adminPassword = 'a long new admin password';

/** What a test file's {@link consoleSuite} starts besides the daemon and the browser. */
export interface ConsoleSuiteOptions {
  /** Changes the demo profile before the daemon starts. */
  edit?(profile: Record<string, unknown>): void;
  /** Why the file cannot run besides a missing Chromium (a peer it needs is missing). */
  skipReason?: string;
  /** Runs before the daemon starts (a peer whose address `edit` writes into the profile). */
  before?(): Promise<void>;
  /** Runs once the daemon runs, before the first test (data seeded through its store). */
  started?(gateway: ConsoleDaemon): void | Promise<void>;
  /** Runs after the browser and the daemon stopped. */
  after?(): Promise<void>;
}

/** One demo daemon and one headless Chromium shared by the serial tests of a test file. */
export interface ConsoleSuite {
  /** The daemon (throws before the suite started). */
  gateway(): ConsoleDaemon;
  /** The browser (throws before the suite started). */
  browser(): Browser;
  /** A page of a new browser context, closed when the test ends. */
  newPage(t: ExecutionContext, options?: BrowserContextOptions): Promise<Page>;
  /**
   * Signs `admin` in on `page`: the suite's first sign-in changes the one-time password to
   * {@link adminPassword}, later ones sign in with it.
   */
  signInAdmin(page: Page): Promise<void>;
  /** {@link newPage} with `admin` signed in ({@link signInAdmin}). */
  adminPage(t: ExecutionContext, options?: BrowserContextOptions): Promise<Page>;
}

/**
 * Registers the start of a demo daemon (see {@link startConsoleDaemon}) and of Chromium before
 * the test file's tests, and their stop after; or, when they cannot run, one skipped test
 * titled `title` and a warning naming `file`, and returns undefined: the file declares its
 * tests only when it gets a suite.
 */
export function consoleSuite(
  file: string,
  title: string,
  options: ConsoleSuiteOptions = {},
): ConsoleSuite | undefined {
  const skipReason = chromiumSkipReason() ?? options.skipReason;
  if (skipReason) {
    console.warn(`${file} skipped: ${skipReason}`);
    test.skip(title, () => {});
    return undefined;
  }
  let gateway: ConsoleDaemon | undefined;
  let browser: Browser | undefined;
  let adminSignedIn = false;
  test.before(async () => {
    await options.before?.();
    gateway = await startConsoleDaemon(options.edit);
    browser = await launchBrowser();
    await options.started?.(gateway);
  });
  test.after.always(async () => {
    await browser?.close();
    await gateway?.stop();
    await options.after?.();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the console suite's ${what} has not started`);
    return value;
  };
  const newPage = async (
    t: ExecutionContext,
    contextOptions: BrowserContextOptions = { viewport: { width: 1366, height: 768 } },
  ) => {
    const context = await started(browser, 'browser').newContext(contextOptions);
    t.teardown(() => context.close());
    return context.newPage();
  };
  const signInAdmin = async (page: Page) => {
    if (adminSignedIn) {
      await signIn(page, started(gateway, 'daemon'), 'admin', adminPassword);
      return;
    }
    await firstAdminSignIn(page, started(gateway, 'daemon'), adminPassword);
    adminSignedIn = true;
  };
  return {
    gateway: () => started(gateway, 'daemon'),
    browser: () => started(browser, 'browser'),
    newPage,
    signInAdmin,
    adminPage: async (t, contextOptions) => {
      const page = await newPage(t, contextOptions);
      await signInAdmin(page);
      return page;
    },
  };
}
