/**
 * The Collections page's edit form in headless Chromium against an in-process demo daemon: the
 * form reads the collection afresh, so a second Edit opened right after a Save shows (and saves)
 * the new members even while the list's reload is still under way, and a list answer arriving
 * while the form is open leaves what the user typed alone. The list's answers are held back by
 * the test (page.route) to make the race certain instead of a matter of timing.
 */
import test from 'ava';
import type { Page, Route } from 'playwright-core';
import { wait } from '../helpers/console-session.js';
import { consoleSuite } from '../helpers/console-suite.js';

const suite = consoleSuite('collections-page.test.ts', 'console collections in Chromium', {
  edit: (profile) => {
    (profile.collections as unknown[]).push({ name: 'press', members: ['Demo/Line1/*'] });
  },
});

/** The list of collections (not one collection's own path). */
const isList = (url: URL) => url.pathname === '/api/v2/Collections';

/**
 * Holds the page's `GET /api/v2/Collections` answers while `holding`, as a slow gateway would;
 * `release()` lets them all through.
 */
async function holdListAnswers(page: Page) {
  const held: Route[] = [];
  const gate = { holding: false };
  await page.route(isList, async (route) => {
    if (gate.holding && route.request().method() === 'GET') held.push(route);
    else await route.continue();
  });
  return {
    gate,
    held,
    release: async () => {
      gate.holding = false;
      for (const route of held.splice(0)) await route.continue();
    },
  };
}

/** The collection as the gateway holds it now. */
async function stored(page: Page, name: string): Promise<{ members: string[] }> {
  return (await page.evaluate(
    async (path) => {
      const response = await fetch(path, { credentials: 'same-origin' });
      return response.json();
    },
    `/api/v2/Collections/${encodeURIComponent(name)}`,
  )) as { members: string[] };
}

if (suite) {
  test.serial(
    'Edit opened at once after a Save shows and saves the new members; a list answer while the form is open keeps what was typed',
    async (t) => {
      t.timeout(180_000);
      const { url } = suite.gateway();
      const page = await suite.adminPage(t, { viewport: { width: 1366, height: 900 } });
      const list = await holdListAnswers(page);

      await page.goto(`${url}/#/collections`, wait);
      const editLink = page.getByRole('link', { name: 'Edit press' });
      const form = page.getByRole('form', { name: 'Edit collection press' });
      const members = form.getByLabel('Members');
      const editPage = `${url}/#/collections/edit/press`;
      const heading = page.getByRole('heading', { name: 'Collections', exact: true });

      await editLink.click(wait);
      await form.waitFor(wait);
      t.is(await members.inputValue(), 'Demo/Line1/*');
      await members.fill('Demo/Line1/**\nDemo/Line2/**', wait);

      // From now on the list answers late, and Edit is opened again (its address, as a click
      // on the list still shown would) before the list is read afresh.
      list.gate.holding = true;
      await form.getByRole('button', { name: 'Save' }).click(wait);
      await heading.waitFor(wait);
      t.deepEqual((await stored(page, 'press')).members, ['Demo/Line1/**', 'Demo/Line2/**']);
      await page.goto(editPage, wait);
      await form.waitFor(wait);
      t.is(await members.inputValue(), 'Demo/Line1/**\nDemo/Line2/**', 'the saved members');

      // Saved unchanged: the second save carries the new members, not the old ones back.
      await form.getByRole('button', { name: 'Save' }).click(wait);
      await heading.waitFor(wait);
      t.deepEqual((await stored(page, 'press')).members, ['Demo/Line1/**', 'Demo/Line2/**']);

      // The form open with text typed; the list's late answers arrive now.
      await page.goto(editPage, wait);
      await form.waitFor(wait);
      await members.fill('Demo/Line3/**', wait);
      const answered = page.waitForResponse(
        (response) => isList(new URL(response.url())) && response.request().method() === 'GET',
        wait,
      );
      t.true(list.held.length > 0, 'list answers were held back');
      await list.release();
      await answered;
      // Two frames: the page has taken the answer and drawn.
      // Page source text: this program has no DOM types.
      await page.evaluate(
        'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))',
      );
      t.is(await members.inputValue(), 'Demo/Line3/**', 'what the user typed');
      await form.getByRole('button', { name: 'Save' }).click(wait);
      await heading.waitFor(wait);
      t.deepEqual((await stored(page, 'press')).members, ['Demo/Line3/**']);
    },
  );
}
