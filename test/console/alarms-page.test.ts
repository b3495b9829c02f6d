/**
 * The console's alarm pages (issue 22, "Console") in headless Chromium against an in-process
 * demo daemon whose alarms watch writable simulator tags the test writes through the API, as a
 * person would use them: the banner on every page (count by priority, the newest unacknowledged
 * alarm, acknowledged from there), shelving with a reason (the API's message at the Minutes
 * field first), bulk acknowledgement with a comment, a Viewer who sees the alarms but whose
 * buttons are disabled with the reason, the definitions editor round trip as Administrator
 * (the API's validation error at its field), the journal's filter and its CSV link, the
 * statistics, and axe plus no horizontal overflow at 1920×1080, 1366×768 and 390 px in every
 * built-in theme. Screenshots: `<tmp>/tagd-console-screenshots/alarms-*.png`.
 */
import { join } from 'node:path';
import test from 'ava';
import type { Page } from 'playwright-core';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import {
  createAccount,
  expectAccessible,
  expectNoOverflow,
  screenshotFolder,
  signIn,
  wait,
  watchPage,
} from '../helpers/console-session.js';
import { type ConsoleSuite, consoleSuite } from '../helpers/console-suite.js';

const level = 'Demo/Test/Level';
const faultA = 'Demo/Test/FaultA';
const faultB = 'Demo/Test/FaultB';

const sizes = [
  { width: 1920, height: 1080 },
  { width: 1366, height: 768 },
  { width: 390, height: 844 },
] as const;

/** The administrator's page, signed in by the first test and used by the later ones. */
let admin: Page | undefined;

/** The demo profile with writable test tags and three alarms on them instead of the demo's. */
function withTestAlarms(profile: Record<string, unknown>): void {
  const drivers = profile.drivers as { name: string; tags: unknown[] }[];
  const demo = drivers.find((driver) => driver.name === 'Demo');
  if (!demo) throw new Error('the demo profile has no Demo driver');
  const held = (name: string, value: number, writeMax: number, unit?: string) => ({
    name,
    kind: 'square',
    low: value,
    high: value,
    writable: true,
    writeMin: 0,
    writeMax,
    ...(unit ? { unit } : {}),
  });
  demo.tags.push(
    held('Test/Level', 10, 1000, 'mm'),
    held('Test/FaultA', 0, 1),
    held('Test/FaultB', 0, 1),
  );
  profile.alarms = [
    {
      name: 'TankHigh',
      source: level,
      condition: 'High',
      limit: 100,
      deadband: 5,
      priority: 'Urgent',
      area: 'Plant/Tank',
      message: 'Tank at {value} {unit}, above {limit} {unit}',
    },
    {
      name: 'FaultA',
      source: faultA,
      condition: 'Digital',
      value: 1,
      priority: 'High',
      area: 'Plant/Line',
      message: 'Drive A faulted',
      maxShelveMinutes: 120,
    },
    {
      name: 'FaultB',
      source: faultB,
      condition: 'Digital',
      value: 1,
      priority: 'Low',
      area: 'Plant/Line',
      message: 'Drive B faulted',
    },
  ];
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({
    path: join(await screenshotFolder(), `alarms-${name}.png`),
    fullPage: true,
  });
}

function adminPage(): Page {
  if (!admin) throw new Error('the first test did not run');
  return admin;
}

function daemonAlarm(name: string) {
  return (suite as ConsoleSuite).gateway().daemon.alarms?.get(name);
}

/** Writes a tag through the API with the page's own session, as the console would. */
async function writeTag(page: Page, path: string, value: number): Promise<void> {
  const status = (await page.evaluate(`(() => {
    const csrf = document.cookie.split(';').map((part) => part.trim().split('='))
      .find(([name]) => name === 'tagd_csrf')?.[1] ?? '';
    return fetch('/api/v2/Tags/Write', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': decodeURIComponent(csrf) },
      body: JSON.stringify({ writes: [{ fullTagId: '${path}', value: ${value} }] }),
    }).then(async (response) => (await response.json()).results?.[0]?.status ?? response.status);
  })()`)) as unknown;
  if (status !== 'Good') throw new Error(`write of ${path} answered ${String(status)}`);
}

/** Waits until the daemon's alarm shows `state`. */
async function untilState(name: string, state: string): Promise<void> {
  const deadline = Date.now() + wait.timeout;
  while (daemonAlarm(name)?.state !== state) {
    if (Date.now() > deadline) {
      throw new Error(`${name} stayed ${daemonAlarm(name)?.state}, not ${state}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const suite = consoleSuite('alarms-page.test.ts', 'console alarm pages in Chromium', {
  edit: withTestAlarms,
});

if (suite) {
  test.serial(
    'the banner counts by priority on every page, opens the newest alarm, and acknowledges it',
    async (t) => {
      t.timeout(180_000);
      const { url } = suite.gateway();
      // The later tests go on with this page: its context lives as long as the browser.
      const context = await suite.browser().newContext({ viewport: { width: 1366, height: 768 } });
      const page = await context.newPage();
      admin = page;
      const watch = watchPage(page);
      await suite.signInAdmin(page);
      const banner = page.getByRole('region', { name: 'Alarm summary' });
      await banner.getByText('No active alarms').waitFor(wait);

      await writeTag(page, level, 150);
      await banner.getByText('1 Urgent').waitFor(wait);
      const newest = banner.locator('.alarm-newest[data-alarm="TankHigh"]');
      await newest.getByText('Active, unacknowledged').waitFor(wait);
      await newest.getByText('Urgent', { exact: true }).waitFor(wait);
      await newest
        .getByRole('link', { name: 'TankHigh: Tank at 150 mm, above 100 mm' })
        .waitFor(wait);

      // On the Tags page too, which still fills the window below the taller top bar exactly.
      await page.goto(`${url}/#/tags`, wait);
      await page.locator('button.tree-folder', { hasText: 'Demo' }).waitFor(wait);
      await banner.getByText('1 Urgent').waitFor(wait);
      const heights = (await page.evaluate(
        '({ scroll: document.documentElement.scrollHeight, client: document.documentElement.clientHeight })',
      )) as { scroll: number; client: number };
      t.true(
        heights.scroll <= heights.client,
        `Tags page ${heights.scroll} px high in ${heights.client}`,
      );
      // And on another page.
      await page.goto(`${url}/#/drivers`, wait);
      await page.getByRole('heading', { name: 'Drivers', exact: true }).waitFor(wait);
      await banner.getByText('1 Urgent').waitFor(wait);
      await shot(page, 'banner-drivers');

      // The link opens the alarm on the Alarms page.
      await newest.getByRole('link', { name: /^TankHigh/ }).click(wait);
      await page.getByRole('heading', { name: /^TankHigh/ }).waitFor(wait);
      t.regex(page.url(), /#\/alarms\/alarm\/TankHigh$/);
      await page.getByTestId('alarm-state').getByText('Active, unacknowledged').waitFor(wait);

      // Acknowledged from the banner: the detail follows through the stream.
      await newest.getByRole('button', { name: 'Acknowledge TankHigh' }).click(wait);
      await page.getByTestId('alarm-state').getByText('Active, acknowledged').waitFor(wait);
      t.is(daemonAlarm('TankHigh')?.state, 'Acknowledged');
      await newest.waitFor({ state: 'detached', ...wait });
      await banner.getByText('1 alarm:').waitFor(wait);
      const journal = suite.gateway().daemon.alarms?.journal.query({
        fromMs: 0,
        toMs: Date.now() + 1000,
        names: ['TankHigh'],
        events: ['Acknowledged'],
        limit: 10,
      });
      t.is(journal?.length, 1);
      t.is(journal?.[0]?.account, 'admin');
      t.deepEqual(watch.cspViolations(), []);
    },
  );

  test.serial(
    'shelve with a reason: the Minutes field shows the API message first; then unshelve',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      const { url } = suite.gateway();
      await writeTag(page, faultA, 1);
      await untilState('FaultA', 'Unacknowledged');
      await page.goto(`${url}/#/alarms`, wait);
      const row = page.locator('tr[data-alarm="FaultA"]');
      await row.getByText('Active, unacknowledged').waitFor(wait);
      await row.getByText('High', { exact: true }).waitFor(wait);
      await row.getByRole('link', { name: 'FaultA' }).click(wait);
      const form = page.getByRole('form', { name: 'Shelve' });
      await form.getByText('At most 120 minutes for this alarm.').waitFor(wait);

      await form.getByLabel('Minutes').fill('0', wait);
      await form.getByLabel('Reason (kept in the journal)').fill('Drive A being replaced', wait);
      await form.getByRole('button', { name: 'Shelve' }).click(wait);
      await page.locator('#shelve-minutes-error').waitFor(wait);
      t.is(await form.getByLabel('Minutes').getAttribute('aria-invalid'), 'true');
      t.is(daemonAlarm('FaultA')?.state, 'Unacknowledged');
      await expectAccessible(t, page, 'shelve form with an error');

      await form.getByLabel('Minutes').fill('30', wait);
      await form.getByRole('button', { name: 'Shelve' }).click(wait);
      await page.getByTestId('alarm-state').getByText('Shelved').waitFor(wait);
      await page.getByText(/Until .* by admin: Drive A being replaced/).waitFor(wait);
      const alarm = daemonAlarm('FaultA');
      t.is(alarm?.state, 'Shelved');
      t.is(alarm?.shelve?.reason, 'Drive A being replaced');
      const minutes = (Date.parse(alarm?.shelve?.until ?? '') - Date.now()) / 60_000;
      t.true(minutes > 28 && minutes <= 30, `shelved for ${minutes} minutes`);
      // Hidden from the banner while shelved.
      const banner = page.getByRole('region', { name: 'Alarm summary' });
      t.is(await banner.locator('.alarm-newest[data-alarm="FaultA"]').count(), 0);
      await page
        .locator('.journal-table tr[data-event="Shelved"]', { hasText: 'Drive A being replaced' })
        .waitFor(wait);
      await shot(page, 'shelved');

      await page.getByRole('button', { name: 'Unshelve' }).click(wait);
      await page.getByTestId('alarm-state').getByText('Active, unacknowledged').waitFor(wait);

      // One-shot: until the alarm clears.
      await page.getByLabel('Until it clears (one-shot)').check(wait);
      t.is(await form.getByLabel('Minutes').count(), 0);
      await form.getByRole('button', { name: 'Shelve' }).click(wait);
      await page.getByText(/Until it clears, at most until/).waitFor(wait);
      t.is(daemonAlarm('FaultA')?.shelve?.kind, 'OneShot');
      await page.getByRole('button', { name: 'Unshelve' }).click(wait);
      await page.getByTestId('alarm-state').getByText('Active, unacknowledged').waitFor(wait);
    },
  );

  test.serial('bulk acknowledge: two selected alarms with one comment', async (t) => {
    t.timeout(120_000);
    const page = adminPage();
    const { url } = suite.gateway();
    await writeTag(page, faultB, 1);
    await untilState('FaultB', 'Unacknowledged');
    await page.goto(`${url}/#/alarms`, wait);
    const rows = page.locator('table.alarm-table tbody tr');
    await page.locator('tr[data-alarm="FaultB"]').waitFor(wait);
    // By priority: Urgent, High, Low.
    t.deepEqual(
      await rows.evaluateAll((list) => list.map((row) => row.getAttribute('data-alarm'))),
      ['TankHigh', 'FaultA', 'FaultB'],
    );
    // TankHigh is acknowledged already: nothing to select.
    t.true(await page.getByRole('checkbox', { name: 'Select TankHigh' }).isDisabled());
    const bulk = page.getByRole('form', { name: 'Acknowledge selected alarms' });
    t.true(await bulk.getByRole('button', { name: /Acknowledge selected/ }).isDisabled());
    await page.getByRole('checkbox', { name: 'Select FaultA' }).check(wait);
    await page.getByRole('checkbox', { name: 'Select FaultB' }).check(wait);
    await bulk.getByLabel('Comment for the selected alarms').fill('Shift handover', wait);
    await bulk.getByRole('button', { name: 'Acknowledge selected (2)' }).click(wait);
    await page.getByText('Acknowledged: FaultA, FaultB.').waitFor(wait);
    await page.locator('tr[data-alarm="FaultB"]').getByText('Active, acknowledged').waitFor(wait);
    t.is(daemonAlarm('FaultA')?.state, 'Acknowledged');
    t.is(daemonAlarm('FaultB')?.state, 'Acknowledged');
    const acknowledged = suite.gateway().daemon.alarms?.journal.query({
      fromMs: 0,
      toMs: Date.now() + 1000,
      names: ['FaultA', 'FaultB'],
      events: ['Acknowledged'],
      limit: 10,
    });
    t.deepEqual(acknowledged?.map((entry) => [entry.name, entry.account, entry.comment]).sort(), [
      ['FaultA', 'admin', 'Shift handover'],
      ['FaultB', 'admin', 'Shift handover'],
    ]);
    t.is(
      await page.getByRole('region', { name: 'Alarm summary' }).locator('.alarm-newest').count(),
      0,
    );
  });

  test.serial('out of service and back in service, as Administrator, with a comment', async (t) => {
    t.timeout(120_000);
    const page = adminPage();
    const { url } = suite.gateway();
    await page.goto(`${url}/#/alarms/alarm/FaultB`, wait);
    const form = page.getByRole('form', { name: 'Service' });
    await form
      .getByLabel('Comment (kept in the journal)')
      .fill('Drive B isolated for repair', wait);
    await form.getByRole('button', { name: 'Take out of service' }).click(wait);
    await page.getByTestId('alarm-state').getByText('Out of service').waitFor(wait);
    t.is(daemonAlarm('FaultB')?.state, 'OutOfService');
    await page
      .locator('.journal-table tr[data-event="OutOfService"]', {
        hasText: 'Drive B isolated for repair',
      })
      .waitFor(wait);
    // Out of service is left out of the banner's count: TankHigh and FaultA remain.
    await page.getByRole('region', { name: 'Alarm summary' }).getByText('2 alarms:').waitFor(wait);
    await form.getByRole('button', { name: 'Put back in service' }).click(wait);
    await page.getByTestId('alarm-state').getByText('Active, acknowledged').waitFor(wait);
    t.is(daemonAlarm('FaultB')?.state, 'Acknowledged');
  });

  test.serial(
    'a Viewer sees the alarms, but every action is disabled with the reason',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      const { url } = suite.gateway();
      await createAccount(page, suite.gateway(), 'watcher', 'watcher first password');
      // A new occurrence waiting for acknowledgement.
      await writeTag(page, level, 10);
      await untilState('TankHigh', 'Normal');
      await writeTag(page, level, 160);
      await untilState('TankHigh', 'Unacknowledged');

      const viewer = await suite.newPage(t, { viewport: { width: 390, height: 844 } });
      await signIn(viewer, suite.gateway(), 'watcher', 'watcher first password');
      const nav = viewer.getByRole('navigation', { name: 'Console pages' });
      await nav.getByRole('link', { name: 'Alarms' }).waitFor(wait);
      const banner = viewer.getByRole('region', { name: 'Alarm summary' });
      const newest = banner.locator('.alarm-newest[data-alarm="TankHigh"]');
      const bannerButton = newest.getByRole('button', { name: 'Acknowledge TankHigh' });
      await bannerButton.waitFor(wait);
      t.true(await bannerButton.isDisabled());
      t.regex(
        (await bannerButton.getAttribute('aria-describedby')) ?? '',
        /banner-ack-why/,
        'the reason is tied to the button',
      );
      await banner.getByText('Acknowledging needs the AlertAcknowledge permission').waitFor(wait);

      await nav.getByRole('link', { name: 'Alarms' }).click(wait);
      await viewer
        .locator('tr[data-alarm="TankHigh"]')
        .getByText('Active, unacknowledged')
        .waitFor(wait);
      const bulk = viewer.getByRole('form', { name: 'Acknowledge selected alarms' });
      t.true(await bulk.getByRole('button', { name: /Acknowledge selected/ }).isDisabled());
      t.true(await viewer.getByRole('checkbox', { name: 'Select TankHigh' }).isDisabled());
      await expectAccessible(t, viewer, 'Viewer, Alarms page at 390 px');
      await expectNoOverflow(t, viewer, 'Viewer, Alarms page at 390 px');
      await shot(viewer, 'viewer-phone');

      await viewer
        .locator('tr[data-alarm="TankHigh"]')
        .getByRole('link', { name: 'TankHigh' })
        .click(wait);
      const acknowledgeForm = viewer.getByRole('form', { name: 'Acknowledge' });
      const button = acknowledgeForm.getByRole('button', { name: 'Acknowledge' });
      await button.waitFor(wait);
      t.true(await button.isDisabled());
      await acknowledgeForm
        .getByText('Acknowledging needs the AlertAcknowledge permission')
        .waitFor(wait);
      t.true(
        await viewer
          .getByRole('form', { name: 'Shelve' })
          .getByRole('button', { name: 'Shelve' })
          .isDisabled(),
      );
      t.true(await viewer.getByRole('button', { name: 'Take out of service' }).isDisabled());
      await viewer.getByText('Out of service needs the AlertManage permission').waitFor(wait);
      await expectAccessible(t, viewer, 'Viewer, one alarm at 390 px');
      await expectNoOverflow(t, viewer, 'Viewer, one alarm at 390 px');

      // Definitions: read, not edited.
      await viewer.goto(`${url}/#/alarms/definitions`, wait);
      await viewer.locator('tr[data-definition="TankHigh"]').waitFor(wait);
      await viewer.getByText('Editing definitions needs the AlertManage permission').waitFor(wait);
      t.is(await viewer.getByRole('link', { name: 'New alarm definition' }).count(), 0);
      t.is(daemonAlarm('TankHigh')?.state, 'Unacknowledged', 'nothing was acknowledged');
    },
  );

  test.serial(
    'definitions editor: add (the API error at its field first), edit, delete as Administrator',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      const { url } = suite.gateway();
      await page.goto(`${url}/#/alarms/definitions`, wait);
      await page.locator('tr[data-definition="FaultB"]').waitFor(wait);
      await page.getByRole('link', { name: 'New alarm definition' }).click(wait);
      const form = page.getByRole('form', { name: 'New alarm definition' });
      await form.getByLabel('Name').fill('PressureHigh', wait);
      await form.getByLabel('Source tag').fill('Demo/Line1/Pressure', wait);
      await form.getByLabel('Condition', { exact: true }).selectOption('High', wait);
      await form.getByLabel('Priority').selectOption('High', wait);
      await form.getByRole('button', { name: 'Create' }).click(wait);
      const limitError = page.locator('#def-limit-error');
      await limitError.getByText('Required for condition High.').waitFor(wait);
      t.is(await form.getByLabel('Limit').getAttribute('aria-invalid'), 'true');
      await expectAccessible(t, page, 'definition form with an error');

      // Above the random walk's range (2–6 bar): the alarm never trips during the test.
      await form.getByLabel('Limit').fill('50.5', wait);
      await form.getByLabel('Area').fill('Line1/Hydraulics', wait);
      await form.getByRole('button', { name: 'Create' }).click(wait);
      const row = page.locator('tr[data-definition="PressureHigh"]');
      await row.getByText('High of Demo/Line1/Pressure above 50.5').waitFor(wait);
      const saved = () =>
        suite
          .gateway()
          .daemon.alarms?.definitions()
          .find((definition) => definition.name === 'PressureHigh');
      t.is(saved()?.limit, 50.5);
      t.is(saved()?.area, 'Line1/Hydraulics');
      t.truthy(daemonAlarm('PressureHigh'), 'in force at once');

      await row.getByRole('link', { name: 'Edit PressureHigh' }).click(wait);
      const edit = page.getByRole('form', { name: 'Edit alarm PressureHigh' });
      t.is(await edit.getByLabel('Limit').inputValue(), '50.5');
      t.true(await edit.getByLabel('Name').isDisabled());
      await edit.getByLabel('Limit').fill('58', wait);
      await edit.getByLabel('Deadband').fill('0.2', wait);
      await edit.getByRole('button', { name: 'Save' }).click(wait);
      await row.getByText('above 58').waitFor(wait);
      t.is(saved()?.limit, 58);
      t.is(saved()?.deadband, 0.2);

      await row.getByRole('button', { name: 'Delete PressureHigh' }).click(wait);
      await row.getByRole('button', { name: 'Delete PressureHigh now' }).click(wait);
      await page.getByText('PressureHigh deleted.').waitFor(wait);
      await row.waitFor({ state: 'detached', ...wait });
      t.is(saved(), undefined);
      t.is(daemonAlarm('PressureHigh'), undefined);
    },
  );

  test.serial(
    'journal: filter by name, priority, area and period; the CSV link exports the same filter',
    async (t) => {
      t.timeout(120_000);
      const page = adminPage();
      const { url } = suite.gateway();
      await page.goto(`${url}/#/alarms/journal`, wait);
      const table = page.locator('table.journal-table');
      await table.locator('tbody tr').first().waitFor(wait);
      const names = () => table.locator('tbody tr td[data-label="Alarm"] a').allInnerTexts();
      t.true(new Set(await names()).size >= 3, 'every alarm at first');

      await page.getByLabel('Alarm names').fill('FaultA', wait);
      await page.getByRole('button', { name: 'Apply filter' }).click(wait);
      await page.waitForURL(/name=FaultA/, wait);
      await table
        .locator('tbody tr td[data-label="Alarm"] a', { hasNotText: 'FaultA' })
        .first()
        .waitFor({ state: 'detached', ...wait });
      const onlyA = await names();
      t.true(
        onlyA.length >= 4,
        `FaultA's activation, shelves and acknowledgement: ${onlyA.length}`,
      );
      t.deepEqual([...new Set(onlyA)], ['FaultA']);
      await table.locator('tr[data-event="Shelved"]').first().waitFor(wait);

      const csv = page.getByRole('link', { name: 'Download CSV' });
      const csvHref = (await csv.getAttribute('href')) ?? '';
      t.regex(csvHref, /^\/api\/v2\/Alerts\/Journal\?/);
      const query = new URL(csvHref, url).searchParams;
      t.is(query.get('name'), 'FaultA');
      t.is(query.get('format'), 'csv');
      const download = (await page.evaluate(
        `fetch(${JSON.stringify(csvHref)}).then(async (response) => ({ status: response.status, type: response.headers.get('content-type'), text: await response.text() }))`,
      )) as { status: number; type: string; text: string };
      t.is(download.status, 200);
      t.regex(download.type, /^text\/csv/);
      const lines = download.text.trim().split(/\r?\n/);
      t.is(lines.length - 1, onlyA.length, 'one CSV row per entry shown');
      t.true(lines.slice(1).every((line) => line.includes('FaultA')));
      // The link downloads as a person would click it.
      const [file] = await Promise.all([page.waitForEvent('download', wait), csv.click(wait)]);
      t.is(file.suggestedFilename(), 'alarm-journal.csv');

      // Priority Urgent, every name: TankHigh alone.
      await page.getByLabel('Alarm names').fill('', wait);
      await page.getByRole('checkbox', { name: 'Urgent' }).check(wait);
      await page.getByRole('button', { name: 'Apply filter' }).click(wait);
      await page.waitForURL(/priority=Urgent/, wait);
      await table
        .locator('tbody tr td[data-label="Alarm"] a', { hasNotText: 'TankHigh' })
        .first()
        .waitFor({ state: 'detached', ...wait });
      t.deepEqual([...new Set(await names())], ['TankHigh']);
      await expectAccessible(t, page, 'journal, filtered');

      // Area Plant/Line, every priority: the two drives.
      await page.getByRole('checkbox', { name: 'Urgent' }).uncheck(wait);
      await page.getByLabel('Area').fill('Plant/Line', wait);
      await page.getByRole('button', { name: 'Apply filter' }).click(wait);
      await page.waitForURL(/area=Plant%2FLine/, wait);
      await table
        .locator('tbody tr td[data-label="Alarm"] a', { hasText: 'TankHigh' })
        .first()
        .waitFor({ state: 'detached', ...wait });
      t.deepEqual([...new Set(await names())].sort(), ['FaultA', 'FaultB']);

      // A custom period that ended before the gateway started: nothing.
      await page.getByLabel('Period').selectOption('custom', wait);
      await page.getByLabel('From', { exact: true }).fill('2020-01-01T00:00', wait);
      await page.getByLabel('To', { exact: true }).fill('2020-01-02T00:00', wait);
      await page.getByRole('button', { name: 'Apply filter' }).click(wait);
      await page.waitForURL(/period=custom/, wait);
      await page.getByText('No journal entries.').waitFor(wait);
      t.is(
        new URL(page.url()).hash.includes(
          `from=${encodeURIComponent(new Date(2020, 0, 1).toISOString())}`,
        ),
        true,
      );
    },
  );

  test.serial('statistics: the report with its chart', async (t) => {
    t.timeout(120_000);
    const page = adminPage();
    const { url } = suite.gateway();
    await page.goto(`${url}/#/alarms/statistics`, wait);
    const rate = page.getByTestId('alarm-rate');
    await rate.waitFor(wait);
    // TankHigh twice, FaultA and FaultB once each (FaultA's later occurrences were shelved).
    const shown = rate
      .locator('dt', { hasText: 'Alarms shown to operators' })
      .locator('xpath=..')
      .locator('dd');
    t.regex((await shown.innerText()).trim(), /^4\b/);
    await page
      .getByRole('table', { name: 'The 10 most frequent alarms' })
      .getByRole('link', { name: 'TankHigh' })
      .waitFor(wait);
    await page
      .getByRole('img', { name: /Bar chart of alarms per 10 minutes/ })
      .locator('canvas')
      .waitFor(wait);
    await expectAccessible(t, page, 'statistics');
  });

  test.serial(
    'axe finds nothing and nothing overflows at 1920, 1366 and 390 px in every built-in theme',
    async (t) => {
      t.timeout(600_000);
      const page = adminPage();
      const { url } = suite.gateway();
      // Each view, and what shows it has loaded.
      const views = [
        ['alarms', 'tr[data-alarm="TankHigh"]'],
        ['alarms/alarm/TankHigh', '.journal-table tbody tr'],
        ['alarms/journal', '.journal-table tbody tr'],
        ['alarms/statistics', '.rate-chart canvas'],
        ['alarms/definitions', 'tr[data-definition="TankHigh"]'],
      ] as const;
      for (const theme of builtInThemes) {
        await page.setViewportSize(sizes[1]);
        await page.goto(`${url}/#/alarms`, wait);
        await page.getByLabel('Theme').selectOption(theme.name, wait);
        await page
          .locator(`html[data-theme="${theme.name}"]`)
          .waitFor({ state: 'attached', ...wait });
        for (const size of sizes) {
          await page.setViewportSize(size);
          for (const [view, loaded] of views) {
            await page.goto(`${url}/#/${view}`, wait);
            await page.locator(loaded).first().waitFor(wait);
            await page
              .locator('[data-testid="alarm-banner"] .alarm-counts', { hasNotText: 'loading' })
              .waitFor(wait);
            const where = `${theme.name}, ${size.width}×${size.height}, #/${view}`;
            await expectAccessible(t, page, where);
            await expectNoOverflow(t, page, where);
          }
          await page.goto(`${url}/#/alarms`, wait);
          await page.locator('tr[data-alarm="TankHigh"]').waitFor(wait);
          await shot(page, `${theme.name}-${size.width}`);
        }
      }
      await page.getByLabel('Theme').selectOption('', wait);
    },
  );
}
