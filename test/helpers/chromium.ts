import { existsSync } from 'node:fs';
import type { ExecutionContext } from 'ava';
import { type BrowserContext, chromium } from 'playwright-core';
import { tempDir } from './temp-dir.js';

/** The system Chromium (Debian package `chromium`); .ci/run installs it. */
export const chromiumPath = '/usr/bin/chromium';

/**
 * Why browser tests cannot run here, or undefined when they can. Outside CI a missing Chromium
 * skips them; in CI (`CI` set) it does not, so a broken install fails instead of hiding.
 */
export function chromiumSkipReason(): string | undefined {
  if (existsSync(chromiumPath) || process.env.CI) return undefined;
  return `${chromiumPath} is missing (apt-get install chromium) and CI is not set`;
}

/**
 * Starts headless Chromium with a fresh profile in a temp dir: no first-run, sync or
 * background traffic, so the test sees only the requests the page makes. Closed with the test.
 */
export async function launchChromium(t: ExecutionContext): Promise<BrowserContext> {
  const userDataDir = await tempDir(t);
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    // Playwright passes the profile folder itself (--user-data-dir) from userDataDir.
    args: [
      '--headless',
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
  // Registered after tempDir's teardown, so it runs first: the browser quits before its folder goes.
  t.teardown(() => context.close());
  return context;
}
