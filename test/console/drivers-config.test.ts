/**
 * Configuring drivers in the console (issue 25), in headless Chromium against an in-process demo
 * daemon and a real Modbus TCP peer (pymodbus) on 127.0.0.1, as a plant engineer would: add a
 * Modbus TCP driver with 50 tags from a CSV file (preview first, then apply), see them read Good
 * values from the peer; export the CSV, change one line, import it and see exactly that change;
 * a file with errors shows them by line and applies nothing; a setting the profile refuses is
 * shown at its field; stop, start and delete the driver; axe clean at three sizes.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import {
  describeViolations,
  seriousAxeViolations,
  signIn,
  wait,
} from '../helpers/console-session.js';
import { type ConsoleSuite, consoleSuite } from '../helpers/console-suite.js';
import { ModbusPeer, pymodbusMissing } from '../helpers/modbus-peer.js';

const sizes = [
  { width: 1920, height: 1080 },
  { width: 1366, height: 768 },
  { width: 390, height: 844 },
];

let peer: ModbusPeer | undefined;

/** 50 holding registers, register i holding i × 10: with scale 0.1 tag T<i> reads i. */
const registers = Array.from({ length: 50 }, (_, index) => index * 10);
const tagName = (index: number) => `Line/T${String(index).padStart(2, '0')}`;
/** The tag list as a spreadsheet saves it: BOM, CRLF, a quoted description with a comma. */
const fiftyTags = `\uFEFF${[
  'name,table,address,type,unit,scale,description',
  ...registers.map(
    (_, index) =>
      `${tagName(index)},holdingRegister,${index},uint16,°C,0.1,"Zone ${index}, oven ""A"""`,
  ),
].join('\r\n')}\r\n`;

async function expectAccessible(t: ExecutionContext, page: Page, where: string): Promise<void> {
  for (const size of sizes) {
    await page.setViewportSize(size);
    const violations = await seriousAxeViolations(page);
    const at = `${where} at ${size.width}×${size.height}`;
    t.is(describeViolations(t, at, violations), '', `${at}: serious or critical violations`);
    const width = await page.evaluate('document.documentElement.scrollWidth');
    if (Number(width) > size.width) {
      // Name what sticks out, so a failure says where to look.
      t.log(
        await page.evaluate(`[...document.querySelectorAll('body *')]
          .filter((element) => element.getBoundingClientRect().right > ${size.width})
          .slice(0, 5)
          .map((element) => element.tagName + '.' + element.className + ' ' + Math.round(element.getBoundingClientRect().right))
          .join('\\n')`),
      );
    }
    t.true(Number(width) <= size.width, `${at}: the page is ${String(width)} px wide`);
  }
  await page.setViewportSize({ width: 1366, height: 768 });
}

const suite = consoleSuite('drivers-config.test.ts', 'console driver configuration in Chromium', {
  skipReason: pymodbusMissing(),
  before: async () => {
    peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: registers });
  },
  after: async () => {
    await peer?.kill();
  },
});

type DriverEntry = { name: string; tags: { name: string; unit?: string }[] };

/** The drivers of the profile file, as the gateway saved it. */
async function savedDrivers(): Promise<DriverEntry[]> {
  const file = join((suite as ConsoleSuite).gateway().folder, 'profile.json');
  return (JSON.parse(await readFile(file, 'utf8')) as { drivers: DriverEntry[] }).drivers;
}

async function importCsv(page: Page, name: string, text: string): Promise<void> {
  await page.locator('#driver-import').setInputFiles({
    name,
    mimeType: 'text/csv',
    buffer: Buffer.from(text, 'utf8'),
  });
  await page.getByRole('heading', { name: `Import preview: ${name}` }).waitFor(wait);
}

if (suite) {
  test.serial(
    'a Modbus TCP driver with 50 tags from a CSV file: preview, apply, Good values; export, edit one line, import shows that change; errors by line apply nothing; stop, start, delete',
    async (t) => {
      t.timeout(600_000);
      const { url, daemon } = suite.gateway();
      const port = (peer as ModbusPeer).port;
      const page = await suite.adminPage(t, {
        viewport: { width: 1366, height: 768 },
        acceptDownloads: true,
      });
      await page.goto(`${url}/#/drivers`, wait);
      // The demo's simulator: its endpoint and counters as words with units.
      const demo = page.getByRole('article', { name: /^Demo/ });
      await demo.getByTestId('driver-endpoint').getByText('simulated values').waitFor(wait);
      await expectAccessible(t, page, 'the Drivers page');

      // Add: the settings, then the tags from the file.
      await page.getByRole('link', { name: 'Add driver' }).click(wait);
      const form = page.getByRole('form', { name: 'New driver' });
      await form.getByLabel('Name', { exact: true }).fill('Press', wait);
      await form.getByLabel('Host', { exact: true }).fill('127.0.0.1', wait);
      await form.getByLabel('Port', { exact: true }).fill(String(port), wait);
      await form.getByLabel('Poll interval (ms)').fill('200', wait);
      await importCsv(page, 'press-tags.csv', fiftyTags);
      const counts = page.getByTestId('import-counts');
      t.is(await counts.textContent(), '50 added, 0 changed, 0 removed, 0 unchanged');
      t.is(await page.getByTestId('import-added').locator('tbody tr').count(), 50);
      t.false((await savedDrivers()).some((d) => d.name === 'Press'));
      await expectAccessible(t, page, 'the import preview');
      await page.getByRole('button', { name: 'Apply the import' }).click(wait);

      // Back on the list: running, its endpoint, rates with units, 50 Good tags.
      const press = page.getByRole('article', { name: /^Press/ });
      await press.getByText('Running').waitFor(wait);
      t.is(
        await press.getByTestId('driver-endpoint').textContent(),
        `tcp://127.0.0.1:${port} (unit 1)`,
      );
      await press.getByText('(50 Good)').waitFor(wait);
      await press
        .locator('[data-counter="requests"] dd', { hasText: /requests\/s$/ })
        .waitFor(wait);
      t.is(await press.locator('[data-counter="requests"] dt').textContent(), 'Requests');
      for (const index of [0, 7, 49]) {
        const sample = daemon.store?.get(`Press/${tagName(index)}`);
        t.is(sample?.quality, 'Good');
        t.is(sample?.value, index, `${tagName(index)} is register ${index} × 0.1`);
        t.is(sample?.metadata?.unit, '°C');
      }
      await expectAccessible(t, page, 'the Drivers page with Press');

      // Export, change one line, import: exactly that change.
      await press.getByRole('link', { name: 'Edit Press' }).click(wait);
      const edit = page.getByRole('form', { name: 'Edit driver Press' });
      await edit.getByLabel('name of Line/T49').waitFor(wait);
      t.is(await edit.locator('tbody tr').count(), 50);
      await expectAccessible(t, page, 'the driver form with 50 tags');
      const [download] = await Promise.all([
        page.waitForEvent('download', wait),
        edit.getByRole('button', { name: 'Export tags as CSV' }).click(wait),
      ]);
      t.is(download.suggestedFilename(), 'Press-tags.csv');
      const exported = await readFile((await download.path()) as string, 'utf8');
      t.true(exported.startsWith('\uFEFFname,table,address,type,bit,length,order,unitId,scale,'));
      const lines = exported.split('\r\n');
      t.is(lines.length, 52, 'header, 50 tags and the final line break');
      t.true(lines[8]?.includes('"Zone 7, oven ""A"""'), lines[8]);
      lines[8] = (lines[8] as string).replace(
        'Line/T07,holdingRegister,7,',
        'Line/T07,holdingRegister,8,',
      );
      await importCsv(page, 'press-edited.csv', lines.join('\r\n'));
      t.is(await counts.textContent(), '0 added, 1 changed, 0 removed, 49 unchanged');
      const changed = page.getByTestId('import-changed').locator('tbody tr');
      t.is(await changed.count(), 1);
      t.deepEqual(await changed.locator('th, td').allTextContents(), [
        'Line/T07',
        '9',
        'address: 7 → 8',
      ]);
      await page.getByRole('button', { name: 'Apply the import' }).click(wait);
      await page.getByRole('article', { name: /^Press/ }).waitFor(wait);
      await t.notThrowsAsync(async () => {
        for (let attempt = 0; attempt < 100; attempt++) {
          if (
            daemon.store?.get('Press/Line/T07')?.value === 8 &&
            daemon.store.get('Press/Line/T07')?.quality === 'Good'
          )
            return;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        throw new Error('Press/Line/T07 never read register 8');
      });

      // A file with errors: every one by line and column, and nothing applied.
      const saved = JSON.stringify(await savedDrivers());
      await page
        .getByRole('article', { name: /^Press/ })
        .getByRole('link', { name: 'Edit Press' })
        .click(wait);
      const broken = [
        'name,table,address,type',
        'Line/A,holdingRegister,1,uint16',
        'Line/B,holdingRegister,x,uint16',
        'Line/C,register,3,uint16',
        'Line/A,holdingRegister,4,uint16',
      ].join('\n');
      await importCsv(page, 'broken.csv', broken);
      const problems = page.getByTestId('import-problems').locator('tbody tr');
      t.deepEqual(
        await problems.evaluateAll((rows) =>
          rows.map((row) =>
            [...row.querySelectorAll('td')]
              .slice(0, 2)
              .map((cell) => cell.textContent)
              .join(' '),
          ),
        ),
        ['3 address', '4 table', '5 name'],
      );
      await page
        .getByText('3 problems: nothing is applied until the file is corrected.')
        .waitFor(wait);
      const apply = page.getByRole('button', { name: 'Apply the import' });
      t.true(await apply.isDisabled());
      t.is(await apply.getAttribute('aria-describedby'), 'import-blocked');
      await expectAccessible(t, page, 'an import with errors');
      // What only the gateway knows (a coil is one bit) is shown at its line too.
      await importCsv(page, 'coil.csv', 'name,table,address,type\nLine/A,coil,1,float32\n');
      await page
        .getByTestId('import-problems')
        .getByText('a coil holds a single bit', { exact: false })
        .waitFor(wait);
      t.deepEqual(
        await page.getByTestId('import-problems').locator('tbody tr td').allTextContents(),
        ['2', 'type', 'a coil holds a single bit: its type must be bool'],
      );
      t.true(await apply.isDisabled());
      t.is(JSON.stringify(await savedDrivers()), saved, 'nothing was applied');
      await page.getByRole('button', { name: 'Discard the import' }).click(wait);

      // A setting the profile refuses: its message at its field; a cell likewise.
      await edit.getByLabel('Port', { exact: true }).fill('70000', wait);
      await edit.getByLabel('address of Line/T01').fill('1.5', wait);
      await edit.getByText("'1.5' is not a whole number.").waitFor(wait);
      await edit.getByLabel('address of Line/T01').fill('1', wait);
      await edit.getByRole('button', { name: 'Save' }).click(wait);
      const portField = edit.getByLabel('Port', { exact: true });
      await page.locator('#driver-transport\\.port-error').waitFor(wait);
      t.is(await portField.getAttribute('aria-invalid'), 'true');
      await expectAccessible(t, page, 'a setting with an error');
      await portField.fill(String(port), wait);
      await edit.getByLabel('unit of Line/T01').fill('bar', wait);
      await edit.getByRole('button', { name: 'Save' }).click(wait);
      const card = page.getByRole('article', { name: /^Press/ });
      await card.waitFor(wait);
      const entry = (await savedDrivers()).find((d) => d.name === 'Press') as DriverEntry;
      t.is(entry.tags.find((tag) => tag.name === 'Line/T01')?.unit, 'bar');

      // Stop (disabled in the profile), start, delete.
      await card.getByRole('button', { name: 'Stop Press' }).click(wait);
      await card.getByText('Disabled', { exact: true }).waitFor(wait);
      await card.getByText('50 (not served while disabled)').waitFor(wait);
      t.is(daemon.store?.get('Press/Line/T00'), undefined, 'a stopped driver serves no tags');
      await card.getByRole('button', { name: 'Start Press' }).click(wait);
      await card.getByText('Running').waitFor(wait);
      await card.getByRole('button', { name: 'Delete Press' }).click(wait);
      await card.getByRole('button', { name: 'Confirm: delete Press and its tags' }).click(wait);
      await page.getByText('Press was deleted.').waitFor(wait);
      t.false((await savedDrivers()).some((d) => d.name === 'Press'));

      // An Operator (DriverView, not DriverManage) reads the drivers; each button says why not.
      const created = (await page.evaluate(
        `fetch('/api/v2/Users', {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-CSRF-Token': decodeURIComponent(document.cookie.split('tagd_csrf=')[1]?.split(';')[0] ?? ''),
          },
          body: JSON.stringify({ username: 'ops', password: 'ops long password', roles: ['Operators'] }),
        }).then((response) => response.status)`,
      )) as number;
      t.is(created, 201);
      await page.context().close();
      const ops = await suite.newPage(t);
      await signIn(ops, suite.gateway(), 'ops', 'ops long password');
      await ops.goto(`${url}/#/drivers`, wait);
      const reason = 'Changing drivers needs the DriverManage permission (Administrators).';
      const add = ops.getByRole('button', { name: 'Add driver' });
      await add.waitFor(wait);
      t.true(await add.isDisabled());
      t.is(
        await ops.locator(`#${await add.getAttribute('aria-describedby')}`).textContent(),
        reason,
      );
      const demoCard = ops.getByRole('article', { name: /^Demo/ });
      await demoCard.getByText('Running').waitFor(wait);
      for (const name of ['Edit Demo', 'Stop Demo', 'Delete Demo']) {
        const button = demoCard.getByRole('button', { name });
        t.true(await button.isDisabled(), name);
        const described = await button.getAttribute('aria-describedby');
        t.is(await ops.locator(`#${described}`).textContent(), reason, name);
      }
      // No endpoint for a DriverView account: the API shows it no configuration.
      t.is(await demoCard.getByTestId('driver-endpoint').count(), 0);
      await expectAccessible(t, ops, 'the Drivers page of an Operator');
    },
  );

  test.serial(
    'a simulator with tags typed into the table, a CAN replay and an OPC UA driver: each added, shown with its endpoint, edited, deleted',
    async (t) => {
      t.timeout(600_000);
      const { url, daemon } = suite.gateway();
      const page = await suite.adminPage(t);

      // Simulator: two tags typed into the table.
      await page.goto(`${url}/#/drivers/new`, wait);
      const form = page.getByRole('form', { name: 'New driver' });
      await form.getByLabel('Type').selectOption('simulator');
      await form.getByLabel('Name', { exact: true }).fill('Sim', wait);
      await form.getByText('No tags yet').waitFor(wait);
      await form.getByRole('button', { name: 'Add tag' }).click(wait);
      await form.getByLabel('name of row 1', { exact: true }).fill('Mixer/Speed', wait);
      await form.getByLabel('kind of Mixer/Speed').selectOption('ramp');
      await form.getByLabel('max of Mixer/Speed', { exact: true }).fill('1500', wait);
      await form.getByLabel('unit of Mixer/Speed').fill('rpm', wait);
      await form.getByRole('button', { name: 'Add tag' }).click(wait);
      await form.getByLabel('name of row 2').fill('Mixer/State', wait);
      await form.getByLabel('kind of Mixer/State').selectOption('string');
      await form.getByLabel('values of Mixer/State').fill('Idle|Mixing', wait);
      // A parameter the kind does not have is refused at its cell by the profile's schema.
      await form.getByLabel('amplitude of Mixer/State').fill('3', wait);
      await form.getByRole('button', { name: 'Add driver' }).click(wait);
      await form.getByText("Unknown key 'amplitude'.").waitFor(wait);
      t.is(await form.getByLabel('amplitude of Mixer/State').getAttribute('aria-invalid'), 'true');
      await form.getByLabel('amplitude of Mixer/State').fill('', wait);
      await form.getByRole('button', { name: 'Add driver' }).click(wait);
      const sim = page.getByRole('article', { name: /^Sim/ });
      await sim.getByText('Running').waitFor(wait);
      t.is(await sim.getByTestId('driver-endpoint').textContent(), 'simulated values');
      t.is(daemon.store?.get('Sim/Mixer/Speed')?.metadata?.unit, 'rpm');
      t.is(daemon.store?.get('Sim/Mixer/State')?.quality, 'Good');

      // Edit: a removed row is a removed tag.
      await sim.getByRole('link', { name: 'Edit Sim' }).click(wait);
      const edit = page.getByRole('form', { name: 'Edit driver Sim' });
      await edit.getByRole('button', { name: 'Remove Mixer/State' }).click(wait);
      await edit.getByLabel('Scan interval (ms)').fill('500', wait);
      await edit.getByRole('button', { name: 'Save' }).click(wait);
      await page.getByRole('article', { name: /^Sim/ }).waitFor(wait);
      t.is(daemon.store?.get('Sim/Mixer/State'), undefined);
      t.is(
        (await savedDrivers()).find((entry) => entry.name === 'Sim')?.tags.length,
        1,
        'one tag left',
      );

      // CAN: the demo's DBC and candump log, replayed; no tag table (the DBC has the tags).
      const config = fileURLToPath(new URL('../../config/can/', import.meta.url));
      await page.goto(`${url}/#/drivers/new`, wait);
      await form.getByLabel('Type').selectOption('can');
      await form
        .getByText('The tags of a CAN driver are the signals of its DBC file')
        .waitFor(wait);
      await form.getByLabel('Name', { exact: true }).fill('Bus', wait);
      await form.getByLabel('DBC file').fill(join(config, 'demo-vehicle.dbc'), wait);
      await form.getByLabel('Adapter').selectOption('replay');
      await form.getByLabel('candump log').fill(join(config, 'demo-vehicle.candump'), wait);
      await form.getByRole('button', { name: 'Add driver' }).click(wait);
      const bus = page.getByRole('article', { name: /^Bus/ });
      await bus.getByText('Running').waitFor(wait);
      t.is(
        await bus.getByTestId('driver-endpoint').textContent(),
        `replay of ${join(config, 'demo-vehicle.candump')}`,
      );
      await bus
        .locator('[data-counter="framesReceived"] dt', { hasText: 'Frames received' })
        .waitFor(wait);

      // OPC UA to a port where no server listens: lost communications, never Good.
      await page.goto(`${url}/#/drivers/new`, wait);
      await form.getByLabel('Type').selectOption('opcua');
      await form.getByLabel('Name', { exact: true }).fill('Plc', wait);
      await form.getByLabel('Endpoint URL').fill('opc.tcp://127.0.0.1:9', wait);
      await form.getByRole('button', { name: 'Add tag' }).click(wait);
      await form.getByLabel('name of row 1', { exact: true }).fill('Oven/Temp', wait);
      await form.getByLabel('nodeId of Oven/Temp').fill('ns=2;s=Oven.Temp', wait);
      await form.getByRole('button', { name: 'Add driver' }).click(wait);
      const plc = page.getByRole('article', { name: /^Plc/ });
      await plc.getByText('Reconnecting').waitFor(wait);
      t.is(await plc.getByTestId('driver-endpoint').textContent(), 'opc.tcp://127.0.0.1:9');
      t.not(daemon.store?.get('Plc/Oven/Temp')?.quality, 'Good');
      await expectAccessible(t, page, 'the Drivers page with every driver type');

      for (const name of ['Sim', 'Bus', 'Plc']) {
        const card = page.getByRole('article', { name: new RegExp(`^${name}`) });
        await card.getByRole('button', { name: `Delete ${name}` }).click(wait);
        await card
          .getByRole('button', { name: `Confirm: delete ${name} and its tags` })
          .click(wait);
        await page.getByText(`${name} was deleted.`).waitFor(wait);
      }
      t.deepEqual(
        (await savedDrivers()).map((entry) => entry.name),
        ['Demo', 'Vehicle', 'Derived'],
      );
    },
  );
}
