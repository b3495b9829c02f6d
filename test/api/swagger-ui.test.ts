import test from 'ava';
import { startApi } from '../helpers/api-harness.js';
import { chromiumSkipReason, launchChromium } from '../helpers/chromium.js';

const title =
  'Swagger UI: Authorize with a token, then Try it out on Tags/Sample answers the sample';
const skipReason = chromiumSkipReason();

// Generous: a cold headless Chromium on a slow CI machine takes seconds to start and render.
const wait = { timeout: 30_000 };

if (skipReason) {
  console.warn(`swagger-ui.test.ts skipped: ${skipReason}`);
  test.skip(title, () => {});
} else {
  test(title, async (t) => {
    t.timeout(120_000);
    const api = await startApi(t);
    await api.addUser('viewer', ['Viewers']);
    const token = await api.signIn('viewer');
    api.store.write([
      {
        fullTagId: 'Demo/Line1/Temperature',
        utcTimestamp: '2026-01-31T08:00:00.000Z',
        quality: 'Good',
        value: 71.25,
        metadata: { unit: '°C' },
      },
    ]);

    const browser = await launchChromium(t);
    const page = browser.pages()[0] ?? (await browser.newPage());
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(`page error: ${error.message}`));
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));

    // A failing step shows what the page complained about (a CSP refusal, a script error).
    t.teardown(() => {
      if (consoleErrors.length > 0) t.log(`browser console errors:\n${consoleErrors.join('\n')}`);
    });

    await page.goto(`${api.baseUrl}/swagger`, { waitUntil: 'load', ...wait });
    await page.locator('.swagger-ui .info .title', { hasText: 'tagd API' }).waitFor(wait);

    // Authorize: paste the token into the bearerAuth field.
    await page.locator('.scheme-container button.authorize').click(wait);
    const dialog = page.locator('.dialog-ux .modal-ux');
    await dialog.waitFor(wait);
    const bearer = dialog.locator('.auth-container', { hasText: 'bearerAuth' });
    await bearer.locator('input[aria-label="auth-bearer-value"]').fill(token, wait);
    await bearer.locator('button.authorize').click(wait);
    await bearer.locator('h6', { hasText: 'Authorized' }).waitFor(wait);
    await dialog.locator('button.btn-done').first().click(wait);
    await dialog.waitFor({ state: 'detached', ...wait });

    // GET /api/v2/Tags/Sample/{fullTagPath}: expand, Try it out, fill the path, Execute.
    const operation = page.locator('#operations-Tags-getTagSample');
    await operation.locator('.opblock-summary-control').click(wait);
    await operation.locator('button.try-out__btn').click(wait);
    await operation
      .locator('tr[data-param-name="fullTagPath"] input')
      .fill('Demo/Line1/Temperature', wait);
    await operation.locator('button.execute').click(wait);

    const response = operation.locator('.live-responses-table .response').first();
    await response.waitFor(wait);
    t.is((await response.locator('.response-col_status').innerText(wait)).trim(), '200');
    const body = await response.locator('.response-col_description pre').first().innerText(wait);
    t.deepEqual(JSON.parse(body), {
      fullTagId: 'Demo/Line1/Temperature',
      utcTimestamp: '2026-01-31T08:00:00.000Z',
      quality: 'Good',
      value: 71.25,
      metadata: { unit: '°C' },
    });
    // The request went out with the pasted token (the curl example shows what was sent).
    const curl = await operation.locator('.curl-command').innerText(wait);
    t.true(curl.includes(`Authorization: Bearer ${token}`), curl);
    // Swagger UI encodes the slashes of a path parameter; the router takes both forms.
    t.is(
      (await operation.locator('.request-url pre').innerText(wait)).trim(),
      `${api.baseUrl}/api/v2/Tags/Sample/Demo%2FLine1%2FTemperature`,
    );

    // Everything came from tagd itself, and the page's CSP blocked nothing it needs.
    const origin = new URL(api.baseUrl).origin;
    const foreign = requests.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'));
    t.deepEqual(foreign, []);
    t.deepEqual(
      consoleErrors.filter((text) => /Content Security Policy|CSP|Refused to/i.test(text)),
      [],
    );
    t.deepEqual(consoleErrors, []);
  });
}
