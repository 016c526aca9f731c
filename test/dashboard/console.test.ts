import type { ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';

/**
 * Issue 14 in headless Chromium: an operator creates an endpoint (seeing the policy's timeline
 * before saving), watches a receiver answer 500 with a body and reads that body on the delivery
 * page, finds the event by its idempotency key, sends the next attempt now once the receiver is
 * fixed, sees the overview's charts move, edits and deletes endpoints; no button is offered for an
 * action the API would refuse. Screenshots of each new page at 1280 px and 375 px.
 */

const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 812 };
const TEST_TIMEOUT_MS = 60_000;

declare const document: { documentElement: { scrollWidth: number; clientWidth: number }; querySelector(s: string): { getAttribute(n: string): string | null } | null };
declare const location: { hash: string };

let postern: TestPostern;
let receiver: TestReceiver;
let browser: BrowserContext;
let chromiumInstance: TestBrowser | undefined;
let key: string;
let receiverFixed = false;
const pageErrors: string[] = [];
/** Set by the first test, used by the later ones. */
let endpointId = '';
let deliveryId = '';
let eventId = '';

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  postern = await startPostern();
  receiver = await startReceiver((_req, _n, res: ServerResponse) => {
    if (receiverFixed) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    } else {
      res.writeHead(500, { 'content-type': 'application/json', 'x-request-trace': 'trace-42' }).end('{"error":"db down"}');
    }
    return 'handled';
  });
  key = (await postern.createOrg('console')).apiKey;
  chromiumInstance = await launchChromium({ viewport: WIDE });
  browser = chromiumInstance.context;
});

afterAll(async () => {
  await chromiumInstance?.close();
  await postern?.close();
  await receiver?.close();
});

async function newTab(viewport = WIDE): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewportSize(viewport);
  page.on('dialog', (dialog) => void dialog.accept());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(`${postern.baseUrl}/dashboard/`);
  await page.fill('#api-key', key);
  await page.press('#api-key', 'Enter');
  await page.locator('h1', { hasText: 'Endpoints' }).waitFor();
  return page;
}

async function shoot(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()!.width;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  expect({ page: name, width, overflowsBy: Math.max(0, scrollWidth - clientWidth) }).toEqual({ page: name, width, overflowsBy: 0 });
}

async function go(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  await page.locator('h1', { hasText: heading }).waitFor();
}

const delivery = async (id: string) => (await postern.api('GET', `/v1/deliveries/${id}`, { key })).body;

test('create an endpoint, see a 500 answer’s body, find the event by idempotency key, Send now after fixing the receiver, watch the charts move', async () => {
  const page = await newTab();

  // Create, with the policy's timeline shown before saving.
  await page.click('#new-endpoint');
  await page.locator('h1', { hasText: 'New endpoint' }).waitFor();
  await page.fill('#endpoint-url', receiver.url);
  await page.fill('#endpoint-description', 'orders service');
  await page.fill('#endpoint-event-types', 'order.created, order.paid');
  await page.selectOption('#endpoint-policy', 'standard');
  await page.fill('#endpoint-overrides', '{"maxAttempts": 3, "schedule": {"kind": "fixed", "waitsMs": [600000, 600000]}, "jitterRatio": 0}');
  await page.click('#preview-policy');
  await page.locator('#preview-words', { hasText: '3 attempts; the last starts 20 min–20 min after the first' }).waitFor();
  expect(await page.locator('#policy-preview circle').count()).toBe(3);
  await shoot(page, 'endpoint-new');
  await page.click('#save-endpoint');
  await page.locator('h1', { hasText: receiver.url }).waitFor();
  endpointId = /#\/endpoints\/(ep_\w+)/.exec(page.url())![1]!;
  const created = (await postern.api('GET', `/v1/endpoints/${endpointId}`, { key })).body;
  expect(created).toMatchObject({ url: receiver.url, description: 'orders service', eventTypes: ['order.created', 'order.paid'], policy: { maxAttempts: 3, keepResponseBody: 'failed' } });
  // Nothing failed yet: no bulk redelivery is offered.
  expect(await page.locator('#redeliver-failed').count()).toBe(0);

  // An event fails at the receiver with a body.
  const sent = await postern.api('POST', '/v1/events', { key, body: { type: 'order.created', data: { order: 77 }, idempotencyKey: 'order-77' } });
  eventId = sent.body.id;
  deliveryId = sent.body.deliveries[0].id;
  await waitUntil('the first attempt failed', async () => ((await delivery(deliveryId)).waitingForNextAttempt ? true : undefined));

  // Search by idempotency key: the events page, then the event, then its delivery.
  await page.fill('#search', 'order-77');
  await page.press('#search', 'Enter');
  await page.locator('h1', { hasText: 'Events' }).waitFor();
  await page.locator(`#evt-${eventId}`).waitFor();
  expect(await page.locator('tbody tr').count()).toBe(1);
  expect(await page.inputValue('#filter-key')).toBe('order-77');
  await shoot(page, 'events');
  await page.click(`#evt-${eventId}`);
  await page.locator('h1', { hasText: eventId }).waitFor();
  // The body exactly as the receiver got it.
  expect(await page.locator('#envelope').innerText()).toBe(receiver.requests[0]!.body);
  await shoot(page, 'event');
  await page.click(`.event-deliveries a[href="#/deliveries/${deliveryId}"]`);
  await page.locator('h1', { hasText: deliveryId }).waitFor();

  // The receiver's answer, as it came back; the request headers that were sent.
  expect(await page.locator('#response-body-1').innerText()).toBe('{"error":"db down"}');
  expect(await page.locator('#response-headers-1').innerText()).toContain('x-request-trace: trace-42');
  const requestHeaders = await page.locator('#request-headers-1').innerText();
  expect(requestHeaders).toContain(`webhook-id: ${eventId}`);
  expect(requestHeaders).toMatch(/webhook-signature: v1,\S+/);
  // A pending delivery whose policy waits for its own attempts: no Redeliver, but Send now.
  expect(await page.locator('#redeliver').count()).toBe(0);
  await page.locator('#send-now').waitFor();
  await shoot(page, 'delivery-response');

  // The overview before the fix: one failed attempt.
  await go(page, `#/overview?endpointId=${endpointId}`, 'Overview');
  await page.locator('#volume-chart[data-attempts="1"]').waitFor();
  expect(await page.locator('#failed-total').innerText()).toBe('1');
  expect(await page.locator('.errors-table').innerText()).toContain('http_500');
  const before = await page.locator('#volume-chart rect').count();

  // Fix the receiver; Send now spends attempt 2 at once instead of in 10 minutes.
  receiverFixed = true;
  await go(page, `#/deliveries/${deliveryId}`, deliveryId);
  await page.click('#send-now');
  await page.locator('#delivery-status', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
  expect(await page.locator('#send-now').count()).toBe(0);
  expect(await page.locator('details#attempt-2 summary').innerText()).toContain('HTTP 200');
  // Success keeps no response excerpt under the default `failed`, and says why.
  expect(await page.locator('details#attempt-2').textContent()).toContain('failed attempts only');
  expect(receiver.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2']);

  // The charts move by themselves as attempts finish.
  await go(page, `#/overview?endpointId=${endpointId}`, 'Overview');
  await page.locator('#volume-chart[data-attempts="2"]').waitFor();
  await postern.api('POST', '/v1/events', { key, body: { type: 'order.paid', data: { order: 78 } } });
  await page.locator('#volume-chart[data-attempts="3"]').waitFor({ timeout: 15_000 });
  expect(await page.locator('#success-rate').innerText()).toBe('66.6 %');
  expect(await page.locator('#volume-chart rect').count()).toBeGreaterThanOrEqual(before);
  await shoot(page, 'overview');
  await page.selectOption('#overview-window', 'day');
  await page.locator('#volume-chart[data-attempts="3"]').waitFor();
  await page.selectOption('#overview-scope', '');
  await page.locator('#volume-caption', { hasText: '3 attempts in the last 24 hours' }).waitFor();

  // Health: every failed attempt shows.
  await go(page, `#/endpoints/${endpointId}`, receiver.url);
  expect(await page.locator('#failed-in-all').innerText()).toBe('1');
  expect(await page.locator('#failed-in-a-row').innerText()).toBe('0');
  expect(await page.locator('#last-failure').innerText()).not.toBe('—');
  expect(pageErrors).toEqual([]);
  await page.close();
}, TEST_TIMEOUT_MS);

test('edit, reveal and copy the secret, delete; no button for an action the API would refuse; bad addresses say so', async () => {
  const page = await newTab();
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await page.fill('#endpoint-description', 'orders service (v2)');
  await page.click('#save-endpoint');
  await page.locator('.notice', { hasText: 'Endpoint saved' }).waitFor();
  expect((await postern.api('GET', `/v1/endpoints/${endpointId}`, { key })).body.description).toBe('orders service (v2)');
  expect((await postern.api('GET', `/v1/endpoints/${endpointId}`, { key })).body.policy.maxAttempts).toBe(3);

  await page.click('#reveal-secret');
  const shown = await page.locator('#shown-secret code').innerText();
  expect(shown).toBe((await postern.api('GET', `/v1/endpoints/${endpointId}/secret`, { key })).body.secret);
  await page.locator('#copy-secret').waitFor();

  // Paused: no test event. Resume is offered instead of Pause.
  await page.click('#pause');
  await page.locator('#inactive-banner').waitFor();
  expect(await page.locator('#send-test').count()).toBe(0);
  await page.click('#resume');
  await page.locator('#send-test').waitFor();

  // The events page lists both events; a type filter applies.
  await go(page, '#/events', 'Events');
  await page.locator(`#evt-${eventId}`).waitFor();
  expect(await page.locator('tbody tr').count()).toBe(2);
  await page.fill('#filter-type', 'order.paid');
  await page.press('#filter-type', 'Enter');
  await waitUntil('the filtered list', async () => (await page.locator('tbody tr').count()) === 1 && (await page.locator(`#evt-${eventId}`).count()) === 0);

  // Delete a second endpoint from its edit page.
  const doomed = await postern.createEndpoint(key, { url: receiver.url.replace('/hook', '/doomed'), policy: 'standard' });
  await go(page, `#/endpoints/${doomed.id}/edit`, 'Edit endpoint');
  await shoot(page, 'endpoint-edit');
  await page.click('#delete-endpoint');
  await page.locator('.notice', { hasText: 'Endpoint deleted' }).waitFor();
  expect((await postern.api('GET', `/v1/endpoints/${doomed.id}`, { key })).status).toBe(404);

  // A malformed address shows an error instead of loading forever.
  await go(page, '#/endpoints/%ZZ', 'could not be shown');
  expect(await page.locator('.error-box p').innerText()).toContain('malformed');
  // An invalid override is refused before saving, naming the field.
  await go(page, '#/endpoints/new', 'New endpoint');
  await page.fill('#endpoint-overrides', '{"maxAttempts": 0}');
  await page.click('#preview-policy');
  await page.locator('#preview-error', { hasText: 'maxAttempts' }).waitFor();
  expect(pageErrors).toEqual([]);
  await page.close();
}, TEST_TIMEOUT_MS);

test('the new pages at phone width (375 px): nothing overflows sideways', async () => {
  const page = await newTab(PHONE);
  await go(page, `#/overview?endpointId=${endpointId}`, 'Overview');
  await page.locator('#volume-chart').waitFor();
  await shoot(page, 'overview');
  await go(page, '#/events', 'Events');
  await page.locator(`#evt-${eventId}`).waitFor();
  await shoot(page, 'events');
  await go(page, `#/events/${eventId}`, eventId);
  await shoot(page, 'event');
  await go(page, `#/deliveries/${deliveryId}`, deliveryId);
  await page.locator('#response-body-1').waitFor();
  await shoot(page, 'delivery-response');
  await go(page, '#/endpoints/new', 'New endpoint');
  await page.locator('#policy-preview circle').first().waitFor();
  await shoot(page, 'endpoint-new');
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await page.locator('#policy-preview circle').first().waitFor();
  await shoot(page, 'endpoint-edit');
  expect(pageErrors).toEqual([]);
  await page.close();
}, TEST_TIMEOUT_MS);

test('the audit log page lists who changed what, filters by action, and fits a phone', async () => {
  const created = await postern.api('POST', '/v1/endpoints', { key, body: { url: `${receiver.url}/audited`, description: 'audited' } });
  expect(created.status).toBe(201);
  const changed = await postern.api('PATCH', `/v1/endpoints/${created.body.id}`, { key, body: { description: 'audited, renamed' } });
  expect(changed.status).toBe(200);
  const page = await newTab();
  await page.click('a[data-nav="audit-log"]');
  await page.locator('h1', { hasText: 'Audit log' }).waitFor();
  await page.locator('td', { hasText: 'endpoint.updated' }).first().waitFor();
  await expect(page.locator('td', { hasText: 'description' }).first().isVisible()).resolves.toBe(true);
  await page.fill('input[name="action"]', 'endpoint.created');
  await page.click('form[aria-label="Filter the audit log"] button');
  await page.locator('td', { hasText: 'endpoint.created' }).first().waitFor();
  expect(await page.locator('td', { hasText: 'endpoint.updated' }).count()).toBe(0);
  await shoot(page, 'audit-log');
  await page.setViewportSize(PHONE);
  await shoot(page, 'audit-log');
  await page.close();
  expect(pageErrors).toEqual([]);
}, TEST_TIMEOUT_MS);
