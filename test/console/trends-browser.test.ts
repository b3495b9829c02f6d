/**
 * The Trends page and the tags table (docs/console.md) in headless Chromium as a person would
 * use them, against an in-process demo daemon on the real clock with history: a trend of three
 * demo tags (°C, %, On/Off: three axes) that grows while open, zoomed by a drag, kept in the URL
 * across a reload; "Last 24 hours" over a day of seeded history (1-minute averages across the
 * whole day, a Bad hour marked, not one point at the edge); the history exported as CSV; the
 * tags table sorted and searched, its selection exported; axe clean at 1920×1080, 1366×768 and
 * 390 px in every built-in theme. Screenshots: `<tmp>/tagd-console-screenshots/trends-*.png`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import type { Page } from 'playwright-core';
import type { Sample } from '../../src/tags/sample.js';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import { expectAccessible, screenshotFolder, wait, watchPage } from '../helpers/console-session.js';
import { consoleSuite } from '../helpers/console-suite.js';

const seeded = 'Test/Seeded/Level';
const minute = 60_000;
const hour = 60 * minute;
const dense = ['Test/Dense/A', 'Test/Dense/B', 'Test/Dense/C'];

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({
    path: join(await screenshotFolder(), `trends-${name}.png`),
    fullPage: true,
  });
}

/** A day of one-minute samples of a level, Bad (lost communications) for one hour of it. */
function seededDay(nowMs: number): Sample[] {
  const samples: Sample[] = [];
  const first = Math.floor((nowMs - 24 * hour) / minute) * minute + minute;
  for (let at = first; at <= nowMs - 2 * minute; at += minute) {
    const fromEnd = nowMs - at;
    const bad = fromEnd > 10 * hour && fromEnd <= 11 * hour;
    samples.push({
      fullTagId: seeded,
      utcTimestamp: new Date(at).toISOString(),
      ...(bad
        ? { quality: 'Bad' as const, reason: 'Disconnected' as const }
        : { quality: 'Good' as const, value: 50 + 40 * Math.sin(at / (3 * hour)) }),
      metadata: { unit: '%', description: 'Seeded tank level' },
    });
  }
  return samples;
}

/** 10,000 samples of each of three tags, 0.3 s apart, ending a minute ago. */
function densePens(nowMs: number): Sample[] {
  const samples: Sample[] = [];
  for (const [index, path] of dense.entries()) {
    for (let step = 0; step < 10_000; step += 1) {
      const at = nowMs - minute - (10_000 - step) * 300;
      samples.push({
        fullTagId: path,
        utcTimestamp: new Date(at).toISOString(),
        quality: 'Good',
        value: 100 * index + 10 * Math.sin(step / 200) + (step % 7),
        metadata: { unit: ['°C', 'bar', 'rpm'][index] as string },
      });
    }
  }
  return samples;
}

/** The pen's point count as its legend entry states it. */
async function penPoints(page: Page, path: string): Promise<number> {
  return Number(
    await page.locator(`.trend-pen[data-path="${path}"]`).getAttribute('data-points', wait),
  );
}

/**
 * Evaluates `expression` in the page until it is truthy (30 s at most) and returns its value.
 * Through the DevTools protocol: the page's CSP forbids the eval that waitForFunction needs.
 */
async function until<T>(page: Page, expression: string): Promise<T> {
  const deadline = Date.now() + wait.timeout;
  for (;;) {
    const value = (await page.evaluate(expression)) as T;
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`Still false after ${wait.timeout} ms: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function plotRange(page: Page): Promise<[number, number]> {
  const text = (await page.getByTestId('trend-plot').getAttribute('data-x-range', wait)) ?? '';
  return text.split(',').map(Number) as [number, number];
}

const suite = consoleSuite('trends-browser.test.ts', 'trends in Chromium', {
  edit: (profile) => {
    const history = profile.history as { log: unknown[] };
    history.log.push({ source: 'Test/**', mode: 'onChange' });
  },
  // A day of history of one tag, written through the store as a driver would (stamped in the
  // past), so the logger stores it as it stores every sample.
  started: (gateway) => {
    gateway.daemon.store?.write(seededDay(Date.now()));
    gateway.daemon.store?.write(densePens(Date.now()));
  },
});

if (suite) {
  test.serial(
    'a trend of three demo tags: live, zoomed, kept in the URL, 24 hours of history, exported',
    async (t) => {
      t.timeout(300_000);

      const page = await suite.newPage(t, {
        viewport: { width: 1920, height: 1080 },
        locale: 'de-DE',
        timezoneId: 'Europe/Berlin',
        acceptDownloads: true,
      });
      const watch = watchPage(page);
      await suite.signInAdmin(page);

      await page.getByRole('link', { name: 'Trends' }).click(wait);
      await page.getByRole('heading', { name: 'Trends' }).waitFor(wait);
      await page
        .getByRole('combobox', { name: 'Range' })
        .selectOption({ label: 'Last 15 minutes' }, wait);
      const add = page.getByLabel('Add a tag');
      for (const path of [
        'Demo/Line1/Temperature',
        'Demo/Line1/FillLevel',
        'Demo/Line1/PumpRunning',
      ]) {
        await add.fill(path, wait);
        await page.getByRole('button', { name: 'Add pen' }).click(wait);
        await page.locator(`.trend-pen[data-path="${path}"]`).waitFor(wait);
      }
      // A text tag is refused with the reason.
      await add.fill('Demo/Line1/MachineState', wait);
      await page.getByRole('button', { name: 'Add pen' }).click(wait);
      await page.getByRole('alert').filter({ hasText: 'holds text' }).waitFor(wait);

      const plot = page.getByTestId('trend-plot');
      await plot.locator('canvas').waitFor(wait);
      t.deepEqual(JSON.parse((await plot.getAttribute('data-axes', wait)) ?? '[]'), [
        '°C',
        '%',
        'On/Off',
      ]);
      const legend = page.getByRole('list', { name: 'Pens' });
      t.is(await legend.getByRole('listitem').count(), 3);
      t.regex(await legend.innerText(), /Demo\/Line1\/Temperature\s+°C/);
      await page.locator('.trend-status', { hasText: /Logged raw/ }).waitFor(wait);
      t.regex(
        page.url(),
        /#\/trends\?pen=Demo\/Line1\/Temperature&pen=Demo\/Line1\/FillLevel&pen=Demo\/Line1\/PumpRunning&range=15m$/,
      );

      // Live: the simulator's new values are appended while the page is open.
      const before = await penPoints(page, 'Demo/Line1/Temperature');
      await until(
        page,
        `Number(document.querySelector('.trend-pen[data-path="Demo/Line1/Temperature"]').dataset.points) >= ${before + 3}`,
      );
      const [liveStart, liveStop] = await plotRange(page);
      t.true(Math.abs(liveStop - liveStart - 15 * minute) < 2_000, 'the live window is 15 minutes');
      t.true(Math.abs(liveStop - Date.now()) < 30_000, 'the live window ends now');
      // The time axis speaks German: 24-hour times.
      const ticks = JSON.parse(
        (await plot.getAttribute('data-time-ticks', wait)) ?? '[]',
      ) as string[];
      t.true(ticks.length >= 2);
      for (const line of ticks.flatMap((label) => label.split('\n'))) {
        t.regex(line, /^(\d{2}:\d{2}(:\d{2})?|\d{1,2}\.\d{1,2}\.)$/);
      }
      await expectAccessible(t, page, 'trend of three pens, 1920×1080');
      await shot(page, '01-live');

      // Zoom: a drag across the middle of the plot shows that span, fixed, in the URL.
      const over = plot.locator('.u-over');
      const box = await over.boundingBox();
      if (!box) return t.fail('no plot area');
      await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 5 });
      await page.mouse.up();
      await until(page, `location.hash.includes('from=')`);
      const [zoomStart, zoomStop] = await plotRange(page);
      t.true(
        zoomStop - zoomStart < 4 * minute && zoomStop - zoomStart > 2 * minute,
        `zoomed to ${(zoomStop - zoomStart) / 1000} s`,
      );
      t.true(
        zoomStart > liveStart + 5 * minute && zoomStop < liveStop - 5 * minute,
        'the span dragged over',
      );
      t.is(await page.getByRole('combobox', { name: 'Range' }).inputValue(), 'custom');
      // The wheel zooms out around the cursor.
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.wheel(0, 300);
      await until(
        page,
        `(() => { const [a, b] = document.querySelector('[data-testid="trend-plot"]').dataset.xRange.split(',').map(Number); return b - a > ${zoomStop - zoomStart + 10_000}; })()`,
      );

      // A reload keeps pens and range.
      const zoomedUrl = page.url();
      await page.reload({ waitUntil: 'load', ...wait });
      await page.locator('.trend-pen').nth(2).waitFor(wait);
      t.is(page.url(), zoomedUrl);
      t.is(await page.getByRole('combobox', { name: 'Range' }).inputValue(), 'custom');

      // 24 hours with a day of history: 1-minute averages over the whole day, the Bad hour a gap.
      await add.fill(seeded, wait);
      await page.getByRole('button', { name: 'Add pen' }).click(wait);
      await page
        .getByRole('combobox', { name: 'Range' })
        .selectOption({ label: 'Last 24 hours' }, wait);
      await page
        .locator('.trend-status', { hasText: /Averages of 1-minute windows/ })
        .waitFor(wait);
      t.deepEqual(JSON.parse((await plot.getAttribute('data-axes', wait)) ?? '[]'), [
        '°C',
        '%',
        'On/Off',
      ]);
      const points = await penPoints(page, seeded);
      t.true(points > 1_300 && points < 1_450, `${points} one-minute windows of the seeded day`);
      const [dayStart, dayStop] = await plotRange(page);
      t.true(Math.abs(dayStop - dayStart - 24 * hour) < 2_000, 'the axis spans 24 hours');
      const seededEntry = page.locator(`.trend-pen[data-path="${seeded}"]`);
      t.regex(await seededEntry.innerText(), /not Good in 1 span/);
      // Drawn across the day, not one point at an edge: the pen's colour from left to right.
      const spread = await until<{ first: number; last: number }>(
        page,
        `(() => {
          const host = document.querySelector('[data-testid="trend-plot"]');
          const canvas = host.querySelector('canvas');
          const over = host.querySelector('.u-over');
          const box = canvas.getBoundingClientRect();
          const plot = over.getBoundingClientRect();
          const scale = canvas.width / box.width;
          const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
          const xs = [];
          // The fourth pen's colour, #7a5cc2.
          for (let i = 0; i < pixels.length; i += 4) {
            if (Math.abs(pixels[i] - 122) < 30 && Math.abs(pixels[i + 1] - 92) < 30 &&
                Math.abs(pixels[i + 2] - 194) < 30 && pixels[i + 3] > 128) {
              xs.push(box.left + ((i / 4) % canvas.width) / scale);
            }
          }
          if (xs.length < 100) return false;
          return { first: (Math.min(...xs) - plot.left) / plot.width, last: (Math.max(...xs) - plot.left) / plot.width };
        })()`,
      );
      t.log(
        `seeded pen drawn from ${(spread.first * 100).toFixed(1)} % to ${(spread.last * 100).toFixed(1)} %`,
      );
      t.true(spread.first < 0.05 && spread.last > 0.95, 'the seeded day spans the axis');
      await expectAccessible(t, page, 'trend over 24 hours');
      await shot(page, '02-24h');

      // Export: the pens' history as drawn (1-minute averages), one CSV row per window.
      const downloading = page.waitForEvent('download', wait);
      await page.getByRole('button', { name: 'Export CSV' }).click(wait);
      const download = await downloading;
      t.regex(download.suggestedFilename(), /^trend-.*\.csv$/);
      const csv = (await readFile((await download.path()) as string, 'utf8')).replace(
        /^\ufeff/,
        '',
      );
      const lines = csv.split('\r\n');
      t.is(lines[0], 'time,path,value,unit,quality,series');
      t.is(lines.at(-1), '');
      const rows = lines.slice(1, -1).map((line) => line.split(','));
      const level = rows.filter((row) => row[1] === seeded);
      t.true(
        Math.abs(level.length - points) <= 2,
        `${level.length} exported windows, ${points} drawn`,
      );
      t.true(level.every((row) => row[3] === '%' && row[5] === 'avg 1m'));
      // The logger stored the change to Bad (onChange: repeats are not logged), so one Bad
      // window without a value, and the next value an hour later: the gap the chart leaves.
      const badAt = level.findIndex((row) => row[4] === 'Bad');
      t.deepEqual(
        level.filter((row) => row[4] === 'Bad').map((row) => row[2]),
        [''],
      );
      const gapMs = Date.parse(level[badAt + 1]?.[0] ?? '') - Date.parse(level[badAt]?.[0] ?? '');
      t.true(gapMs >= 59 * minute && gapMs <= 61 * minute, `Bad for ${gapMs / minute} minutes`);
      t.true(
        level
          .filter((row) => row[4] === 'Good')
          .every((row) => Number(row[2]) >= 9 && Number(row[2]) <= 91),
      );
      t.true(rows.some((row) => row[1] === 'Demo/Line1/PumpRunning' && row[5] === 'max 1m'));
      await page
        .locator('.trend-panel [role="status"]', { hasText: /Exported [\d.,]+ rows/ })
        .waitFor(wait);

      // Remove a pen from the legend.
      await page.getByRole('button', { name: 'Remove Demo/Line1/FillLevel' }).click(wait);
      await until(page, `!location.hash.includes('FillLevel')`);
      t.is(await legend.getByRole('listitem').count(), 3);
      t.deepEqual(watch.cspViolations(), []);
    },
  );

  test.serial(
    'the tags table: columns, sorting, search by path, unit and description, selection exported',
    async (t) => {
      t.timeout(180_000);
      const { url } = suite.gateway();
      const page = await suite.adminPage(t, {
        viewport: { width: 1366, height: 768 },
        acceptDownloads: true,
      });
      await page.goto(`${url}/#/tags`, { waitUntil: 'load', ...wait });
      await page
        .getByRole('navigation', { name: 'Tags view' })
        .getByRole('link', { name: 'Table' })
        .click(wait);
      const table = page.getByRole('table', { name: 'Tags' });
      await table.locator('tbody tr[data-path="Demo/Line1/Temperature"]').waitFor(wait);
      const headers = await table.getByRole('columnheader').allInnerTexts();
      t.deepEqual(headers.map((text) => text.replace(/[▲▼]/g, '').trim()).filter(Boolean), [
        'Path',
        'Value',
        'Timestamp',
        'Data type',
        'Unit',
        'Quality',
        'Driver',
        'Address',
      ]);
      const column = async (name: string) =>
        table.locator(`tbody tr [data-column="${name}"]`).allInnerTexts();
      const paths = async () =>
        table
          .locator('tbody tr')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-path')));

      // Search by unit: the °C tags only.
      const search = page.getByLabel('Search tags');
      await search.fill('°C', wait);
      await page.getByText(/^\d+ of \d+ tags match/).waitFor(wait);
      const celsius = await paths();
      t.true(
        celsius.includes('Demo/Line1/Temperature') && celsius.includes('Demo/Controls/Setpoint'),
      );
      t.true((await column('unit')).every((unit) => unit === '°C'));
      // By description, and by path.
      await search.fill('seeded tank', wait);
      await table.locator(`tbody tr[data-path="${seeded}"]`).waitFor(wait);
      t.deepEqual(await paths(), [seeded]);
      t.deepEqual(await column('dataType'), ['Number']);
      t.deepEqual(await column('driver'), ['Test']);
      await search.fill('Line1', wait);
      await until(page, `document.querySelectorAll('tbody tr').length > 5`);
      t.true((await paths()).every((path) => path?.includes('Line1')));

      // Sort by unit, then descending; by quality; by path again.
      const sortBy = (name: string) =>
        table.getByRole('button', { name: new RegExp(`^${name}`) }).click(wait);
      await sortBy('Unit');
      t.is(
        await table.getByRole('columnheader', { name: /Unit/ }).getAttribute('aria-sort'),
        'ascending',
      );
      const units = (await column('unit')).filter(Boolean);
      t.deepEqual(
        units,
        [...units].sort((a, b) => a.localeCompare(b, undefined, { sensitivity: 'base' })),
      );
      await sortBy('Unit');
      t.is(
        await table.getByRole('columnheader', { name: /Unit/ }).getAttribute('aria-sort'),
        'descending',
      );
      const down = (await column('unit')).filter(Boolean);
      t.deepEqual(
        down,
        [...down].sort((a, b) => b.localeCompare(a, undefined, { sensitivity: 'base' })),
      );
      t.is((await column('unit')).at(-1), '', 'tags without a unit last');
      await sortBy('Path');
      const sorted = await paths();
      t.deepEqual(sorted, [...sorted].sort());
      // Modbus-style addresses: the demo's simulator has none; the column is there and empty.
      t.true((await column('address')).length > 0);

      // Select two rows, export their current values.
      await table.getByLabel('Select Demo/Line1/Temperature').check(wait);
      await table.getByLabel('Select Demo/Line1/FillLevel').check(wait);
      await page.getByText('· 2 selected').waitFor(wait);
      const downloading = page.waitForEvent('download', wait);
      await page.getByRole('button', { name: 'Export CSV' }).click(wait);
      const csv = (await readFile((await (await downloading).path()) as string, 'utf8')).replace(
        /^\ufeff/,
        '',
      );
      const lines = csv.split('\r\n');
      t.is(
        lines[0],
        'path,value,label,unit,quality,timestamp,dataType,driver,address,description,reason',
      );
      // path, unit, quality, data type and driver of each selected row, in the table's order.
      t.deepEqual(
        lines.slice(1, -1).map((line) => {
          const fields = line.split(',');
          return [fields[0], fields[3], fields[4], fields[6], fields[7]];
        }),
        [
          ['Demo/Line1/FillLevel', '%', 'Good', 'Number', 'Demo'],
          ['Demo/Line1/Temperature', '°C', 'Good', 'Number', 'Demo'],
        ],
      );
      t.true(lines.slice(1, -1).every((line) => Number.isFinite(Number(line.split(',')[1]))));
      // The selection opens as a trend.
      await page.getByRole('button', { name: 'Trend selected' }).click(wait);
      await page.getByRole('heading', { name: 'Trends' }).waitFor(wait);
      await page.locator('.trend-pen').nth(1).waitFor(wait);
      t.regex(page.url(), /pen=Demo\/Line1\/FillLevel&pen=Demo\/Line1\/Temperature/);
    },
  );

  test.serial(
    '3 pens × 10,000 raw points: drawn whole, redrawn on every zoom step (cost logged)',
    async (t) => {
      t.timeout(180_000);
      const { url } = suite.gateway();
      const page = await suite.adminPage(t, { viewport: { width: 1920, height: 1080 } });
      await page.goto(
        `${url}/#/trends?${dense.map((path) => `pen=${path}`).join('&')}&range=1h`,
        wait,
      );
      await page.locator('.trend-status', { hasText: /Logged raw: 30,000 samples/ }).waitFor(wait);
      const plot = page.getByTestId('trend-plot');
      t.deepEqual(
        JSON.parse((await plot.getAttribute('data-points', wait)) ?? '[]'),
        [10_000, 10_000, 10_000],
      );
      t.deepEqual(JSON.parse((await plot.getAttribute('data-axes', wait)) ?? '[]'), [
        '°C',
        'bar',
        'rpm',
      ]);
      // Twenty wheel steps in and out over the plot, each a full redraw of the 30,000 points.
      const costs = (await page.evaluate(`(async () => {
      const over = document.querySelector('[data-testid="trend-plot"] .u-over');
      const host = document.querySelector('[data-testid="trend-plot"]');
      const box = over.getBoundingClientRect();
      const costs = [];
      for (let step = 0; step < 20; step += 1) {
        const started = performance.now();
        over.dispatchEvent(new WheelEvent('wheel', {
          deltaY: step < 10 ? -100 : 100, clientX: box.left + box.width * 0.7,
          clientY: box.top + box.height / 2, bubbles: true, cancelable: true,
        }));
        // uPlot redraws in a microtask queued by the scale change: this one runs after it.
        await Promise.resolve();
        costs.push({ draw: Number(host.dataset.drawMs), frame: performance.now() - started });
      }
      return costs;
    })()`)) as { draw: number; frame: number }[];
      const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
      const draws = sorted(costs.map((cost) => cost.draw));
      const frames = sorted(costs.map((cost) => cost.frame));
      t.log(
        `redraw of 3 × 10,000 points: median ${draws[10]} ms, max ${draws.at(-1)} ms; ` +
          `wheel step handled (zoom and redraw): median ${frames[10]?.toFixed(1)} ms, max ${frames.at(-1)?.toFixed(1)} ms`,
      );
      t.true(
        draws.every((ms) => Number.isFinite(ms)),
        'every step redrew',
      );
      // The live path: a data change (alignment of the three pens and the redraw), once per frame at most.
      t.log(`last data update (align + draw): ${await plot.getAttribute('data-update-ms')} ms`);
      await shot(page, '05-dense');
    },
  );

  test.serial(
    'axe finds nothing serious on Trends and the tags table at three sizes in every theme',
    async (t) => {
      t.timeout(300_000);
      const { url } = suite.gateway();
      for (const [width, height] of [
        [1920, 1080],
        [1366, 768],
        [390, 844],
      ] as const) {
        const page = await suite.adminPage(t, { viewport: { width, height } });
        for (const theme of builtInThemes) {
          await page.goto(
            `${url}/#/trends?pen=Demo/Line1/Temperature&pen=Demo/Line1/FillLevel&pen=Demo/Line1/PumpRunning&range=15m`,
            { waitUntil: 'load', ...wait },
          );
          await page.getByLabel('Theme').selectOption(theme.name, wait);
          await page
            .locator(`html[data-theme="${theme.name}"]`)
            .waitFor({ state: 'attached', ...wait });
          await page.locator('.trend-status', { hasText: /Logged raw/ }).waitFor(wait);
          await page.getByTestId('trend-plot').locator('canvas').waitFor(wait);
          // Three units, three axes; a phone draws the first and leaves the plot its width.
          t.is(
            await page.getByTestId('trend-plot').getAttribute('data-axes-drawn'),
            width < 520 ? '1' : '3',
          );
          // Nothing wider than the screen: the page does not scroll sideways.
          const overflow = await page.evaluate(
            'document.documentElement.scrollWidth - window.innerWidth',
          );
          t.true(
            (overflow as number) <= 0,
            `${width} px ${theme.name}: page ${overflow} px too wide`,
          );
          await expectAccessible(t, page, `Trends ${width}×${height} ${theme.name}`);
          if (theme.name === 'dark') await shot(page, `03-${width}-dark`);
          await page.goto(`${url}/#/tags?view=table&filter=Line1`, { waitUntil: 'load', ...wait });
          // The account's theme is applied once the session is resumed: wait for it.
          await page
            .locator(`html[data-theme="${theme.name}"]`)
            .waitFor({ state: 'attached', ...wait });
          await page.getByRole('table', { name: 'Tags' }).locator('tbody tr').first().waitFor(wait);
          await page.getByText('Live', { exact: true }).waitFor(wait);
          const tableOverflow = await page.evaluate(
            'document.documentElement.scrollWidth - window.innerWidth',
          );
          t.true(
            (tableOverflow as number) <= 0,
            `${width} px ${theme.name}: tags table page ${tableOverflow} px too wide`,
          );
          await expectAccessible(t, page, `Tags table ${width}×${height} ${theme.name}`);
          if (theme.name === 'light') await shot(page, `04-table-${width}`);
        }
        await page.getByLabel('Theme').selectOption('', wait);
        await page.context().close();
      }
    },
  );
}
