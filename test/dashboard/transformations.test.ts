import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import type { BrowserContext, Page } from 'playwright-core';
import { TEST_ADMIN_TOKEN, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { launchChromium, saveEndpointForm, type TestBrowser } from '../support/chromium.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The endpoint form's transformation section in headless Chromium, against a real sender and a
 * Slack-shaped receiver: pick the Slack template, test it on its sample (the request shown), save,
 * and the next event arrives as Slack's JSON, signed; the delivery page names the version per
 * attempt. A portal session with webhooks:write edits its endpoint's transformation.
 */

const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 812 };
const TEST_TIMEOUT_MS = 60_000;

declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };
declare const location: { hash: string };

let postern: TestPostern;
let slack: TestReceiver;
let chromiumInstance: TestBrowser | undefined;
let browser: BrowserContext;
let org: { id: string; apiKey: string };
const pageErrors: string[] = [];
let endpointId = '';

/** A receiver shaped like Slack's incoming webhooks: 200 `ok` for `{text, …}` JSON, 400 `invalid_payload` otherwise. */
function slackLike(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { text?: unknown };
    return typeof parsed.text === 'string' && parsed.text.length > 0;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  postern = await startPostern();
  slack = await startReceiver((req) => (slackLike(req.body) ? 200 : 400), '/services/T000/B000/XXXX');
  org = await postern.createOrg('transformations form');
  chromiumInstance = await launchChromium({ viewport: WIDE });
  browser = chromiumInstance.context;
});

afterAll(async () => {
  await chromiumInstance?.close();
  await postern?.close();
  await slack?.close();
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

async function tab(signIn: { key: string } | { portalUrl: string }, viewport = WIDE): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewportSize(viewport);
  page.on('dialog', (dialog) => void dialog.accept());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  if ('key' in signIn) {
    await page.goto(`${postern.baseUrl}/dashboard/`);
    await page.fill('#api-key', signIn.key);
    await page.press('#api-key', 'Enter');
  } else {
    await page.goto(signIn.portalUrl);
  }
  await page.locator('h1', { hasText: 'Endpoints' }).waitFor();
  return page;
}

async function go(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.evaluate((hh) => {
    location.hash = hh;
  }, hash);
  await page.locator('h1', { hasText: heading }).waitFor();
}

async function save(page: Page): Promise<void> {
  await saveEndpointForm(page, slack.url);
}

async function shoot(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()!.width;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  expect({ page: name, width, overflowsBy: Math.max(0, scrollWidth - clientWidth) }).toEqual({ page: name, width, overflowsBy: 0 });
}

/** Posts one event and waits for its delivery to the endpoint to finish; returns it and what the receiver got. */
async function deliver(type: string, data: unknown): Promise<{ delivery: any; body: string; headers: Record<string, string> }> {
  const before = slack.requests.length;
  const posted = await postern.api('POST', '/v1/events', { key: org.apiKey, body: { type, data } });
  const id = posted.body.deliveries.find((d: any) => d.endpointId === endpointId).id;
  const delivery = await waitUntil('the delivery to finish', async () => {
    const got = await postern.api('GET', `/v1/deliveries/${id}`, { key: org.apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(got.body.status) ? got.body : undefined;
  });
  const got = slack.requests[before]!;
  return { delivery, body: got.body, headers: got.headers as Record<string, string> };
}

test('console: pick the Slack template, test it on its sample, save; the next event arrives as Slack JSON, signed; the delivery page names the version', async () => {
  const page = await tab({ key: org.apiKey });
  await page.click('#new-endpoint');
  await page.locator('h1', { hasText: 'New endpoint' }).waitFor();
  await page.fill('#endpoint-url', slack.url);
  await page.fill('#endpoint-event-types', 'invoice.paid');
  await page.locator('#transformation-template option[value="slack"]').waitFor({ state: 'attached' });
  await page.selectOption('#transformation-template', 'slack');
  expect(await page.inputValue('#transformation-code')).toContain('function handler(webhook)');
  // The gutter numbers every line of the code.
  const lines = (await page.inputValue('#transformation-code')).split('\n').length;
  expect((await page.locator('.line-numbers').innerText()).trim().split('\n').at(-1)).toBe(String(lines));
  await page.click('#transformation-test summary');
  await page.click('#transformation-run-test');
  const shown = await page.locator('#transformation-test-result').innerText();
  expect(shown).toContain(`POST ${slack.url}`);
  expect(shown).toContain('"text":"invoice.paid for Ada Lovelace (42.00 EUR)"');
  await shoot(page, 'transformation-form');
  await save(page);
  endpointId = /#\/endpoints\/(ep_\w+)/.exec(page.url())![1]!;
  const stored = (await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: org.apiKey })).body;
  expect(stored.transformation).toMatchObject({ enabled: true, version: 1 });

  const { delivery, body, headers } = await deliver('invoice.paid', { amount: 1999, currency: 'USD', customer: { name: 'Grace Hopper' } });
  expect(delivery.status).toBe('succeeded');
  expect(JSON.parse(body).text).toBe('invoice.paid for Grace Hopper (19.99 USD)');
  const { secret } = (await postern.api('GET', `/v1/endpoints/${endpointId}/secret`, { key: org.apiKey })).body;
  expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();

  await go(page, `#/deliveries/${delivery.id}`, /Delivery/);
  expect(await page.locator('#transformation-version-1').textContent()).toBe(`Transformation version 1: POST ${slack.url}`);
  expect(await page.locator('#request-body-1').textContent()).toBe(body);
  await page.close();
}, TEST_TIMEOUT_MS);

test('a syntax error is shown with its line, and the switch turns the transformation off without a new version', async () => {
  const page = await tab({ key: org.apiKey }, PHONE);
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  const code = await page.inputValue('#transformation-code');
  await page.fill('#transformation-code', code.replace('function handler(webhook) {', 'function handler(webhook) {\n  const = 1;'));
  await page.click('#save-endpoint');
  await page.locator('.notice--error', { hasText: 'transformation.code: line' }).waitFor();
  expect(await page.getAttribute('#transformation-code', 'aria-invalid')).toBe('true');
  await page.fill('#transformation-code', code);
  await page.uncheck('#transformation-enabled');
  await shoot(page, 'transformation-form');
  await save(page);
  const stored = (await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: org.apiKey })).body;
  expect(stored.transformation).toMatchObject({ enabled: false, version: 1 });
  await page.close();
}, TEST_TIMEOUT_MS);

test('portal: a write session edits its endpoint\'s transformation; the next delivery runs the new version', async () => {
  const minted = await postern.api('POST', `/v1/orgs/${org.id}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { scopes: ['webhooks:read', 'webhooks:write'] } });
  const page = await tab({ portalUrl: minted.body.url });
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await page.fill('#transformation-code', 'function handler(webhook) {\n  webhook.payload = { text: "portal: " + webhook.eventType };\n  return webhook;\n}');
  await page.check('#transformation-enabled');
  await save(page);
  const stored = (await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: org.apiKey })).body;
  expect(stored.transformation).toMatchObject({ enabled: true, version: 2 });
  const { delivery, body } = await deliver('invoice.paid', { amount: 1 });
  expect(JSON.parse(body)).toEqual({ text: 'portal: invoice.paid' });
  expect(delivery.attempts[0].transformation.version).toBe(2);
  await page.close();
}, TEST_TIMEOUT_MS);
