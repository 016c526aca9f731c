import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { createIdFactory } from '@postern/shared';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';

/**
 * The dashboard end to end in headless Chromium, against a whole Postern and a real receiver:
 * watch deliveries fail, fix the receiver, redeliver, pause and resume; a read-only key sees no
 * write buttons. Screenshots of every page at 1280 px and 375 px go to test-artifacts/screenshots/.
 */

const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 812 };
const WRITE_BUTTONS = ['#pause', '#resume', '#send-test', '#rotate-secret', '#reveal-secret', '#edit-endpoint', '#redeliver-failed', '#redeliver', '#send-now', '#create-key'];

// Functions passed to page.evaluate run in the browser; the tests' tsconfig has no DOM types.
declare const document: { activeElement: { id: string } | null; documentElement: { scrollWidth: number; clientWidth: number } };
declare const location: { hash: string };

/** Per test: a browser flow waits on real deliveries. */
const TEST_TIMEOUT_MS = 60_000;

let postern: TestPostern;
let receiver: TestReceiver;
let browser: BrowserContext;
let chromiumInstance: TestBrowser | undefined;
let adminKey: string;
let readOnlyKey: string;
let failing: { id: string; url: string };
let paused: { id: string; url: string };
let disabled: { id: string; url: string };
let firstFailedId: string;
let redeliveryId: string;
let receiverHealthy = false;
const pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  postern = await startPostern();
  receiver = await startReceiver(() => (receiverHealthy ? 200 : 500));
  adminKey = (await postern.createOrg('acme')).apiKey;
  const orgId = (await postern.api('GET', '/v1/me', { key: adminKey })).body.orgId as string;

  failing = await postern.createEndpoint(adminKey, { url: receiver.url, policy: fastPolicy(2, 20), eventTypes: ['invoice.paid'], description: 'billing service' });
  paused = await postern.createEndpoint(adminKey, { url: receiver.url.replace('/hook', '/paused'), policy: 'standard', eventTypes: ['other.thing'] });
  await postern.api('POST', `/v1/endpoints/${paused.id}/pause`, { key: adminKey });
  disabled = await postern.createEndpoint(adminKey, { url: receiver.url.replace('/hook', '/disabled'), policy: 'kestrel', eventTypes: ['other.thing'] });
  // As the breaker leaves it: disabled, with a notification for the org.
  const now = Date.now();
  await postern.store.notifications.tripBreaker({
    endpoint: { id: disabled.id, orgId, url: disabled.url },
    status: 'disabled',
    reason: `20 consecutive failed deliveries since ${new Date(now - 3_600_000).toISOString()}`,
    pendingOnTrip: 'hold',
    retention: { days: 30 },
    consecutiveFailures: 20,
    notificationId: createIdFactory()('ntf', now),
    nowMs: now,
  });
  await postern.store.endpoints.update({ id: disabled.id, orgId }, { consecutiveFailures: 20, failureStreakStartedAt: now - 3_600_000 }, now);
  const readOnly = await postern.api('POST', '/v1/api-keys', { key: adminKey, body: { name: 'support (read-only)', scopes: ['webhooks:read'] } });
  readOnlyKey = readOnly.body.apiKey;

  chromiumInstance = await launchChromium({ viewport: WIDE });
  browser = chromiumInstance.context;
});

afterAll(async () => {
  await chromiumInstance?.close();
  await postern?.close();
  await receiver?.close();
});

/** A fresh tab (its own sessionStorage) that accepts confirm dialogs and records script errors. */
async function newTab(viewport = WIDE): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewportSize(viewport);
  page.on('dialog', (dialog) => void dialog.accept());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) pageErrors.push(msg.text());
  });
  return page;
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${postern.baseUrl}/dashboard/`);
  await page.fill('#api-key', key);
  await page.press('#api-key', 'Enter');
  await page.locator('h1', { hasText: 'Endpoints' }).waitFor();
}

/** Saves a full-page screenshot and checks that nothing overflows the viewport sideways. */
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

function row(page: Page, text: string) {
  return page.locator('tbody tr', { hasText: text });
}

test('watch deliveries fail, fix the receiver, redeliver, follow the link to the original, pause and resume', async () => {
  const post = async (invoice: string) => (await postern.api('POST', '/v1/events', { key: adminKey, body: { type: 'invoice.paid', data: { invoice } } })).body as { id: string; deliveries: [{ id: string }] };
  const first = await post('in_1');
  const second = await post('in_2');
  firstFailedId = first.deliveries[0].id;

  const page = await newTab();
  await signIn(page, adminKey);
  await page.locator('[data-testid="key-summary"]', { hasText: 'webhooks:write' }).waitFor();

  // Endpoints list: URL, status, policy, failures; paused and disabled marked.
  const list = page.locator('table');
  await list.locator('a', { hasText: failing.url }).waitFor();
  await expectClass(row(page, paused.url), 'row--inactive');
  await expectClass(row(page, disabled.url), 'row--disabled');
  expect(await row(page, paused.url).innerText()).toContain('paused');
  expect(await row(page, disabled.url).innerText()).toMatch(/disabled[\s\S]*kestrel[\s\S]*20/);

  await list.locator('a', { hasText: failing.url }).click();
  await page.locator('h1', { hasText: failing.url }).waitFor();
  // The log follows the attempts by itself until both deliveries have failed.
  await waitUntil('both deliveries failed in the log', async () => (await row(page, 'failed').count()) === 2, 15_000);
  const newestRow = await row(page, 'failed').first().innerText();
  expect(newestRow).toContain('http_500');
  expect(newestRow).toContain('500');
  expect(await page.locator('tbody tr a.mono').first().getAttribute('href')).toBe(`#/deliveries/${second.deliveries[0].id}`);
  const health = await page.locator('.facts').first().innerText();
  expect(health).toMatch(/Failed attempts in a row\s*4/);
  await shoot(page, 'endpoint');

  // Filter by status: it applies as soon as it changes.
  await page.selectOption('#status-filter', 'succeeded');
  await page.locator('.empty', { hasText: 'No succeeded deliveries' }).waitFor();
  await page.selectOption('#status-filter', '');
  await waitUntil('the unfiltered log again', async () => (await row(page, 'failed').count()) === 2);

  receiverHealthy = true;
  await page.click(`a[href="#/deliveries/${firstFailedId}"]`);
  await page.locator('h1', { hasText: firstFailedId }).waitFor();
  const attempts = page.locator('table').first();
  expect(await attempts.locator('tbody tr').count()).toBe(2);
  expect(await attempts.innerText()).toMatch(/#1[\s\S]*500[\s\S]*http_500[\s\S]*#2[\s\S]*500[\s\S]*http_500/);
  // The body exactly as sent; pretty-printing is an option.
  expect(await page.locator('#envelope').innerText()).toContain('"data":{"invoice":"in_1"}');
  await page.click('#toggle-pretty');
  expect(await page.locator('#envelope').innerText()).toContain('"invoice": "in_1"');
  await shoot(page, 'delivery');

  await page.click('#redeliver');
  await page.locator('#redelivery-of', { hasText: firstFailedId }).waitFor();
  redeliveryId = /#\/deliveries\/(dlv_\w+)/.exec(page.url())![1]!;
  expect(redeliveryId).not.toBe(firstFailedId);
  await page.locator('#delivery-status', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
  expect(await page.locator('table').first().innerText()).toMatch(/#1[\s\S]*200/);
  expect(await page.locator('.notice').innerText()).toContain('Redelivery queued');
  await shoot(page, 'delivery-redelivered');
  expect(receiver.requests.filter((r) => r.headers['webhook-id'] === first.id).map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2', '1']);

  await page.click('#original-link');
  await page.locator('h1', { hasText: firstFailedId }).waitFor();
  expect(page.url()).toContain(`#/deliveries/${firstFailedId}`);

  // Back to the endpoint: the redelivery heads the log, marked as one.
  await page.click('.crumbs a:nth-of-type(2)');
  await page.locator('h1', { hasText: failing.url }).waitFor();
  const newest = await page.locator('tbody tr').first().innerText();
  expect(newest).toMatch(/succeeded/);
  expect(newest).toContain('redelivery');

  // Pause with the keyboard alone: Tab to the button, press Enter.
  await page.locator('h1').focus();
  await tabTo(page, 'pause');
  await page.keyboard.press('Enter');
  await page.locator('#inactive-banner', { hasText: 'paused' }).waitFor();
  expect((await postern.api('GET', `/v1/endpoints/${failing.id}`, { key: adminKey })).body.status).toBe('paused');
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('resume');
  await shoot(page, 'endpoint-paused');
  await page.click('#resume');
  await page.locator('#pause').waitFor();
  expect(await page.locator('#inactive-banner').count()).toBe(0);
  expect((await postern.api('GET', `/v1/endpoints/${failing.id}`, { key: adminKey })).body.status).toBe('active');

  await page.click('#send-test');
  await page.locator('.notice', { hasText: 'Test event sent' }).waitFor();
  await waitUntil('the test event at the receiver', () => receiver.requests.some((r) => r.body.includes('"type":"webhook.test"')));

  await page.click('#rotate-secret');
  const shown = await page.locator('#new-secret code').innerText();
  expect(shown).toMatch(/^whsec_/);
  expect((await postern.api('GET', `/v1/endpoints/${failing.id}/secret`, { key: adminKey })).body.secret).toBe(shown);

  await page.click('#redeliver-failed');
  await page.locator('.notice', { hasText: /failed deliver(y is|ies are) being sent again/ }).waitFor();

  expect(pageErrors).toEqual([]);
  await page.close();
}, TEST_TIMEOUT_MS);

test('the policy timeline, notifications and API keys pages', async () => {
  const page = await newTab();
  await signIn(page, adminKey);
  await shoot(page, 'endpoints');

  await go(page, `#/endpoints/${paused.id}/timeline`, 'Policy timeline');
  // standard: 8 attempts, the last between 30 h 35 min ±20 %.
  expect(await page.locator('#timeline-chart circle').count()).toBe(8);
  expect(await page.locator('#timeline-caption').innerText()).toMatch(/attempt 8 starts between .* and .* after the first/);
  expect(await page.locator('tbody tr').count()).toBe(8);
  await shoot(page, 'timeline');

  await page.click('nav[aria-label="Main"] >> text=Notifications');
  await page.locator('h1', { hasText: 'Notifications' }).waitFor();
  const notification = await row(page, disabled.url).innerText();
  expect(notification).toMatch(/endpoint disabled[\s\S]*20 consecutive failed deliveries/);
  await shoot(page, 'notifications');

  await page.click('nav[aria-label="Main"] >> text=API keys');
  await page.locator('h1', { hasText: 'API keys' }).waitFor();
  expect(await row(page, 'support (read-only)').innerText()).toContain(`pk_${readOnlyKey.slice(3, 11)}…`);
  expect(await page.content()).not.toContain(readOnlyKey);
  await page.fill('#key-name', 'ci deploys');
  await page.click('#create-key');
  const made = await page.locator('#new-key code').innerText();
  expect((await postern.api('GET', '/v1/me', { key: made })).body.scopes).toEqual(['webhooks:read']);
  await shoot(page, 'api-keys');
  expect(pageErrors).toEqual([]);
  await page.close();
}, TEST_TIMEOUT_MS);

test('an endpoint created with Ed25519 signatures shows its public key; switching scheme rotates into HMAC', async () => {
  const page = await newTab();
  await signIn(page, adminKey);
  await go(page, '#/endpoints/new', 'New endpoint');
  await page.fill('#endpoint-url', receiver.url.replace('/hook', '/ed25519'));
  await page.fill('#endpoint-event-types', 'none.ever');
  await page.selectOption('#endpoint-signature-scheme', 'ed25519');
  await page.click('#save-endpoint');
  const publicKey = await page.locator('#public-key').innerText();
  expect(publicKey).toMatch(/^whpk_/);
  const id = /#\/endpoints\/(ep_\w+)/.exec(page.url())![1]!;
  const api = (await postern.api('GET', `/v1/endpoints/${id}`, { key: adminKey })).body;
  expect(api).toMatchObject({ signatureScheme: 'ed25519', publicKey });
  await page.getByText('Ed25519 (v1a)', { exact: true }).waitFor();
  // The key must wrap, not push the page sideways, on a phone too.
  await shoot(page, 'endpoint-ed25519');
  await page.setViewportSize(PHONE);
  await shoot(page, 'endpoint-ed25519');
  await page.setViewportSize(WIDE);

  await page.click('#reveal-secret');
  expect(await page.locator('#shown-secret code').innerText()).toMatch(/^whsk_/);

  await page.click('#switch-scheme');
  const shown = await page.locator('#new-secret code').innerText();
  expect(shown).toMatch(/^whsec_/);
  await page.locator('#public-key').waitFor({ state: 'detached' });
  expect((await postern.api('GET', `/v1/endpoints/${id}/secret`, { key: adminKey })).body).toMatchObject({ secret: shown, signatureScheme: 'hmac-sha256', publicKey: null, previous: 1 });
  expect(pageErrors).toEqual([]);
  await page.close();
}, TEST_TIMEOUT_MS);

test('a read-only key sees no write buttons, and its write calls get 403', async () => {
  const page = await newTab();
  await signIn(page, readOnlyKey);
  expect(await page.locator('[data-testid="key-summary"]').innerText()).toContain('read-only');

  await go(page, `#/endpoints/${failing.id}`, failing.url);
  await page.locator('tbody tr').first().waitFor();
  await go(page, `#/deliveries/${firstFailedId}`, firstFailedId);
  await go(page, '#/api-keys', 'API keys');
  await go(page, `#/endpoints/${failing.id}`, failing.url);
  for (const selector of WRITE_BUTTONS) expect({ selector, count: await page.locator(selector).count() }).toEqual({ selector, count: 0 });
  expect(await page.locator('h2', { hasText: 'Actions' }).count()).toBe(0);
  await shoot(page, 'endpoint-read-only');
  await go(page, `#/deliveries/${firstFailedId}`, firstFailedId);
  expect(await page.locator('#redeliver').count()).toBe(0);
  await go(page, '#/endpoints', 'Endpoints');
  expect(await page.locator('#new-endpoint').count()).toBe(0);

  // The same calls the buttons make, from the page with its key: refused, naming the scope.
  const answers = await page.evaluate(
    async ({ key, endpointId, deliveryId }) => {
      const calls = [`/v1/endpoints/${endpointId}/pause`, `/v1/endpoints/${endpointId}/test`, `/v1/endpoints/${endpointId}/rotate-secret`, `/v1/deliveries/${deliveryId}/redeliver`];
      return Promise.all(
        calls.map(async (path) => {
          const res = await fetch(path, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
          return { path, status: res.status, error: ((await res.json()) as { error: unknown }).error };
        }),
      );
    },
    { key: readOnlyKey, endpointId: failing.id, deliveryId: firstFailedId },
  );
  for (const a of answers) expect(a).toEqual({ path: a.path, status: 403, error: { code: 'insufficient_scope', message: expect.stringContaining('webhooks:write') } });
  expect((await postern.api('GET', `/v1/endpoints/${failing.id}`, { key: adminKey })).body.status).toBe('active');
  await page.close();
}, TEST_TIMEOUT_MS);

test('API errors read as sentences: an unknown delivery, a revoked key', async () => {
  const page = await newTab();
  await signIn(page, adminKey);
  await go(page, '#/deliveries/dlv_00000000000000000000000000', 'could not be shown');
  expect(await page.locator('.error-box p').innerText()).toBe('That delivery does not exist, or it belongs to another organisation.');

  const doomed = (await postern.api('POST', '/v1/api-keys', { key: adminKey, body: { name: 'doomed', scopes: ['webhooks:read'] } })).body;
  const other = await newTab();
  await signIn(other, doomed.apiKey);
  await postern.api('DELETE', `/v1/api-keys/${doomed.id}`, { key: adminKey });
  await go(other, '#/notifications', 'Sign in');
  expect(await other.locator('.error-box').innerText()).toContain('Postern did not accept this API key');
  await other.close();
  await page.close();
}, TEST_TIMEOUT_MS);

test('every page at phone width (375 px): nothing overflows sideways', async () => {
  const page = await newTab(PHONE);
  await signIn(page, adminKey);
  await shoot(page, 'endpoints');
  await go(page, `#/endpoints/${failing.id}`, failing.url);
  await page.locator('tbody tr').first().waitFor();
  await shoot(page, 'endpoint');
  await go(page, `#/deliveries/${firstFailedId}`, firstFailedId);
  await shoot(page, 'delivery');
  await go(page, `#/deliveries/${redeliveryId}`, redeliveryId);
  await shoot(page, 'delivery-redelivered');
  await go(page, `#/endpoints/${paused.id}/timeline`, 'Policy timeline');
  await shoot(page, 'timeline');
  await go(page, '#/notifications', 'Notifications');
  await shoot(page, 'notifications');
  await go(page, '#/api-keys', 'API keys');
  await shoot(page, 'api-keys');
  await go(page, `#/endpoints/${paused.id}`, paused.url);
  await shoot(page, 'endpoint-paused');
  await page.close();

  const readOnly = await newTab(PHONE);
  await signIn(readOnly, readOnlyKey);
  await go(readOnly, `#/endpoints/${failing.id}`, failing.url);
  await readOnly.locator('tbody tr').first().waitFor();
  await shoot(readOnly, 'endpoint-read-only');
  await readOnly.close();

  const signin = await newTab(PHONE);
  await signin.goto(`${postern.baseUrl}/dashboard/`);
  await signin.locator('#api-key').waitFor();
  // Signed out: no navigation to pages that would only answer 401.
  expect(await signin.locator('nav[aria-label="Main"]').isVisible()).toBe(false);
  await shoot(signin, 'sign-in');
  await signin.close();
  expect(pageErrors).toEqual([]);
}, TEST_TIMEOUT_MS);

test('the dashboard is served at /dashboard/ with a strict content security policy', async () => {
  const redirect = await fetch(`${postern.baseUrl}/dashboard`, { redirect: 'manual' });
  expect(redirect.status).toBe(301);
  expect(redirect.headers.get('location')).toBe('/dashboard/');
  const index = await fetch(`${postern.baseUrl}/dashboard/`);
  expect(index.status).toBe(200);
  expect(index.headers.get('content-type')).toContain('text/html');
  expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
  const script = await fetch(`${postern.baseUrl}/dashboard/js/main.js`);
  expect(script.headers.get('content-type')).toContain('javascript');
  const missing = await fetch(`${postern.baseUrl}/dashboard/nope.js`);
  expect(missing.status).toBe(404);
}, TEST_TIMEOUT_MS);

async function expectClass(locator: ReturnType<Page['locator']>, className: string): Promise<void> {
  expect((await locator.getAttribute('class')) ?? '').toContain(className);
}

/** Presses Tab until the element with `id` has focus; fails after 60 presses. */
async function tabTo(page: Page, id: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => document.activeElement?.id)) === id) return;
  }
  throw new Error(`#${id} cannot be reached with Tab`);
}
