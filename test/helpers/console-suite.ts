/**
 * A console test file's Chromium suite: one demo daemon and one browser for its serial tests,
 * registered as ava hooks (so only test files import it; benchmarks use console-session.ts).
 */
import test, { type ExecutionContext } from 'ava';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { chromiumSkipReason } from './chromium.js';
import {
  type ConsoleDaemon,
  firstAdminSignIn,
  launchBrowser,
  signIn,
  startConsoleDaemon,
} from './console-session.js';

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
