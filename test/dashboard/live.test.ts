import type { BrowserContext, Page } from 'playwright-core';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';

/**
 * In headless Chromium: the console's and the portal's endpoint pages follow the live stream, so a
 * delivery sent while the page is open appears in its log without a click or a poll (with nothing
 * in progress the page used to poll nothing at all); where the stream is refused, the page falls
 * back to polling.
 */

declare const document: { documentElement: { dataset: Record<string, string | undefined> } };

let postern: TestPostern;
let receiver: TestReceiver;
let browser: BrowserContext;
let chromiumInstance: TestBrowser | undefined;
let key: string;
let orgId: string;
let endpointId: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  // One stream per key: the second tab of the last test is refused and must poll.
  postern = await startPostern({ liveStream: { maxPerKey: 1 } });
  receiver = await startReceiver(() => 200);
  ({ apiKey: key, id: orgId } = await postern.createOrg('live'));
  endpointId = (await postern.createEndpoint(key, { url: receiver.url, policy: { preset: 'standard', maxAttempts: 1 } })).id;
  chromiumInstance = await launchChromium({ viewport: { width: 1280, height: 900 } });
  browser = chromiumInstance.context;
});

afterAll(async () => {
  await chromiumInstance?.close();
  await postern?.close();
  await receiver?.close();
});

async function consoleTab(): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(`${postern.baseUrl}/dashboard/`);
  await page.fill('#api-key', key);
  await page.press('#api-key', 'Enter');
  await page.locator('h1', { hasText: 'Endpoints' }).waitFor();
  return page;
}

const liveState = (page: Page) => page.evaluate(() => document.documentElement.dataset.live ?? null);

async function sendAndSee(page: Page, n: number): Promise<void> {
  const accepted = await postern.client(key).events.create({ type: 'invoice.paid', data: { n } });
  const deliveryId = accepted.deliveries[0]!.id;
  await page.locator(`#dlv-${deliveryId}`).waitFor({ timeout: 15_000 });
  await page.locator(`tr:has(#dlv-${deliveryId})`, { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
}

test('the console shows a delivery sent while the endpoint page is open, from the live stream', async () => {
  const page = await consoleTab();
  await page.goto(`${postern.baseUrl}/dashboard/#/endpoints/${endpointId}`);
  await page.waitForFunction(() => document.documentElement.dataset.live === 'live');
  await sendAndSee(page, 1);
  expect(await liveState(page)).toBe('live');
  expect(postern.liveHub.readerCount).toBe(1);
  await page.close();
  expect(pageErrors).toEqual([]);
}, 60_000);

test('the portal follows the same stream with its session token', async () => {
  const session = (await postern.api('POST', `/v1/orgs/${orgId}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { ttlSeconds: 600 } })).body;
  const page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(`${session.url.replace(/^https?:\/\/[^/]+/, postern.baseUrl)}`);
  await page.locator('h1', { hasText: 'Endpoints' }).waitFor();
  await page.evaluate((hash) => ((globalThis as unknown as { location: { hash: string } }).location.hash = hash), `#/endpoints/${endpointId}`);
  await page.waitForFunction(() => document.documentElement.dataset.live === 'live');
  await sendAndSee(page, 2);
  await page.close();
  expect(pageErrors).toEqual([]);
}, 60_000);

test('a page whose stream is refused falls back to polling and still shows new deliveries', async () => {
  const first = await consoleTab();
  await first.goto(`${postern.baseUrl}/dashboard/#/endpoints/${endpointId}`);
  await first.waitForFunction(() => document.documentElement.dataset.live === 'live');
  const second = await consoleTab();
  await second.goto(`${postern.baseUrl}/dashboard/#/endpoints/${endpointId}`);
  await second.waitForFunction(() => document.documentElement.dataset.live === 'polling');
  // Polling runs while deliveries are in progress: the fallback keeps the page moving.
  const accepted = await postern.client(key).events.create({ type: 'invoice.paid', data: { n: 3 } });
  await second.locator(`#dlv-${accepted.deliveries[0]!.id}`).waitFor({ timeout: 15_000 });
  await Promise.all([first.close(), second.close()]);
  expect(pageErrors).toEqual([]);
}, 60_000);
