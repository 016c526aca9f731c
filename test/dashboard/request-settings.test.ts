import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { TEST_ADMIN_TOKEN, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { startTokenServer, type TokenServer } from '../support/oauth-server.js';
import { launchChromium, saveEndpointForm, type TestBrowser } from '../support/chromium.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The endpoint form's request settings in headless Chromium, against a real sender and receiver:
 * static headers (a secret one write-only, shown ••••, kept while not replaced), auth (bearer,
 * basic, OAuth 2.0 client credentials; secrets replaced through "Replace"), the egress proxy, the
 * API's 400 naming the field shown at the form, and the endpoint page saying what is sent. A
 * portal session with webhooks:write edits them; a read-only one sees no controls.
 * Screenshots of the form at 1280 px and 375 px.
 */

const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 812 };
const TEST_TIMEOUT_MS = 60_000;
const CLIENT = { clientId: 'form-client', clientSecret: 'form-s3cret' };

declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };
declare const location: { hash: string };

let postern: TestPostern;
let receiver: TestReceiver;
let tokens: TokenServer;
let chromiumInstance: TestBrowser | undefined;
let browser: BrowserContext;
let org: { id: string; apiKey: string };
const pageErrors: string[] = [];
/** Made by the first test through the form, changed by the later ones. */
let endpointId = '';

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  postern = await startPostern();
  receiver = await startReceiver(() => 200);
  tokens = await startTokenServer(CLIENT);
  org = await postern.createOrg('request settings');
  chromiumInstance = await launchChromium({ viewport: WIDE });
  browser = chromiumInstance.context;
});

afterAll(async () => {
  await chromiumInstance?.close();
  await postern?.close();
  await receiver?.close();
  await tokens?.close();
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

async function shoot(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()!.width;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  expect({ page: name, width, overflowsBy: Math.max(0, scrollWidth - clientWidth) }).toEqual({ page: name, width, overflowsBy: 0 });
}

const endpoint = async (id: string, key = org.apiKey) => (await postern.api('GET', `/v1/endpoints/${id}`, { key })).body;

/** Posts one event of `type` and returns the request the receiver got for it. */
async function deliveredRequest(type: string) {
  const before = receiver.requests.length;
  const r = await postern.api('POST', '/v1/events', { key: org.apiKey, body: { type, data: { n: before } } });
  expect(r.status).toBe(202);
  const [request] = (await receiver.waitForRequests(before + 1, 15_000)).slice(before);
  return request!;
}

/** Saves the form and waits for the endpoint page; an error notice instead fails with its text. */
async function save(page: Page, heading: string | RegExp = receiver.url): Promise<void> {
  await saveEndpointForm(page, heading);
}

/** A self-signed client certificate with `cn` and its unencrypted key, PEM (openssl). */
function clientCertificate(cn: string): { certificate: string; privateKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'postern-form-mtls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-days', '1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    return { certificate: readFileSync(join(dir, 'cert.pem'), 'utf8'), privateKey: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function mint(scopes: string[]) {
  const r = await postern.api('POST', `/v1/orgs/${org.id}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { scopes } });
  if (r.status !== 201) throw new Error(`mint: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { url: string };
}

test('create with a secret header and bearer auth: the API has them, the receiver gets them, the page masks the secret', async () => {
  const page = await tab({ key: org.apiKey });
  await page.click('#new-endpoint');
  await page.locator('h1', { hasText: 'New endpoint' }).waitFor();
  await page.fill('#endpoint-url', receiver.url);
  await page.fill('#endpoint-event-types', 'rs.created, rs.replaced, rs.basic, rs.header, rs.portal');
  await page.click('#add-header');
  await page.fill('#header-name-0', 'X-Tenant');
  await page.fill('#header-value-0', 'acme');
  await page.click('#add-header');
  await page.fill('#header-name-1', 'X-Api-Key');
  await page.check('#header-secret-1');
  expect(await page.getAttribute('#header-value-1', 'type')).toBe('password');
  await page.fill('#header-value-1', 'k_live_123');
  // A row added and left blank is not sent.
  await page.click('#add-header');
  await page.selectOption('#auth-type', 'bearer');
  await page.fill('#auth-token', 'tok-one');
  await shoot(page, 'endpoint-request-settings');
  await page.setViewportSize(PHONE);
  await shoot(page, 'endpoint-request-settings');
  await page.setViewportSize(WIDE);
  await save(page);
  endpointId = /#\/endpoints\/(ep_\w+)/.exec(page.url())![1]!;

  const created = await endpoint(endpointId);
  expect(created.headers).toEqual([
    { name: 'X-Tenant', value: 'acme', secret: false },
    { name: 'X-Api-Key', value: '••••', secret: true },
  ]);
  expect(created.auth).toEqual({ type: 'bearer', token: '••••' });
  expect(created.proxy).toBeNull();

  const sent = await deliveredRequest('rs.created');
  expect(sent.headers['x-tenant']).toBe('acme');
  expect(sent.headers['x-api-key']).toBe('k_live_123');
  expect(sent.headers.authorization).toBe('Bearer tok-one');

  // The endpoint page: what is sent, the secret as ••••, its value nowhere on the page.
  expect(await page.locator('#auth-summary').innerText()).toBe('Bearer token');
  expect(await page.locator('#static-headers').innerText()).toMatch(/X-Tenant: acme[\s\S]*X-Api-Key: ••••\s*secret/);
  expect(await page.locator('#proxy-summary').innerText()).toMatch(/^none of its own/);
  expect(await page.content()).not.toContain('k_live_123');
  expect(await page.content()).not.toContain('tok-one');
  await page.setViewportSize(PHONE);
  await shoot(page, 'endpoint-requests');
  await page.close();
}, TEST_TIMEOUT_MS);

test('edit: stored secrets show •••• with Replace; replacing the bearer token keeps the secret header; then switch to basic', async () => {
  const page = await tab({ key: org.apiKey });
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  expect(await page.locator('#header-masked-1').innerText()).toBe('••••');
  expect(await page.isVisible('#header-value-1')).toBe(false);
  expect(await page.locator('#auth-token-masked').innerText()).toBe('••••');
  expect(await page.isVisible('#auth-token')).toBe(false);
  await shoot(page, 'endpoint-edit-request-settings');

  // Saving untouched settings sends none of them: the stored ones stay exactly as they were.
  const requests: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'PATCH') requests.push(r.postData() ?? '');
  });
  await save(page);
  expect(JSON.parse(requests[0]!)).not.toHaveProperty('headers');
  expect(JSON.parse(requests[0]!)).not.toHaveProperty('auth');
  expect(JSON.parse(requests[0]!)).not.toHaveProperty('proxy');

  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await page.click('#auth-token-replace');
  expect(await page.isVisible('#auth-token')).toBe(true);
  expect(await page.inputValue('#auth-token')).toBe('');
  await page.fill('#auth-token', 'tok-two');
  await save(page);
  expect(JSON.parse(requests[1]!)).toMatchObject({ auth: { type: 'bearer', token: 'tok-two' } });
  expect(JSON.parse(requests[1]!)).not.toHaveProperty('headers');
  let sent = await deliveredRequest('rs.replaced');
  expect(sent.headers.authorization).toBe('Bearer tok-two');
  expect(sent.headers['x-api-key']).toBe('k_live_123');

  // Basic: a new type has nothing stored, so its password is a plain input.
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await page.selectOption('#auth-type', 'basic');
  expect(await page.locator('#auth-password-replace').count()).toBe(0);
  await page.fill('#auth-username', 'postern');
  await page.fill('#auth-password', 'correct horse');
  await save(page);
  expect((await endpoint(endpointId)).auth).toEqual({ type: 'basic', username: 'postern', password: '••••' });
  expect(await page.locator('#auth-summary').innerText()).toBe('Basic (user postern)');
  sent = await deliveredRequest('rs.basic');
  expect(sent.headers.authorization).toBe(`Basic ${Buffer.from('postern:correct horse').toString('base64')}`);

  // Replacing the secret header's value; removing the other header.
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await page.click('#header-remove-0');
  await page.click('#header-replace-1');
  await page.fill('#header-value-1', 'k_live_456');
  await save(page);
  expect((await endpoint(endpointId)).headers).toEqual([{ name: 'X-Api-Key', value: '••••', secret: true }]);
  sent = await deliveredRequest('rs.header');
  expect(sent.headers['x-api-key']).toBe('k_live_456');
  expect(sent.headers['x-tenant']).toBeUndefined();
  await page.close();
}, TEST_TIMEOUT_MS);

test('an invalid header name shows the API’s error, naming the field, and marks the input', async () => {
  const page = await tab({ key: org.apiKey });
  await go(page, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await page.click('#add-header');
  await page.fill('#header-name-1', 'Bad Header');
  await page.fill('#header-value-1', 'x');
  await page.click('#save-endpoint');
  const notice = page.locator('.notice--error');
  await notice.waitFor();
  expect(await notice.innerText()).toMatch(/Postern refused the request: headers\.1\.name: "Bad Header" is not a valid header name/);
  expect(await page.getAttribute('#header-name-1', 'aria-invalid')).toBe('true');
  expect(await page.locator('h1').innerText()).toBe('Edit endpoint');
  // Nothing was written.
  expect((await endpoint(endpointId)).headers).toEqual([{ name: 'X-Api-Key', value: '••••', secret: true }]);
  await page.setViewportSize(PHONE);
  await shoot(page, 'endpoint-form-error');
  await page.close();
}, TEST_TIMEOUT_MS);

test('OAuth 2.0 and a proxy through the form: the page names the token URL and client, and when the last token came', async () => {
  const page = await tab({ key: org.apiKey });
  await page.click('#new-endpoint');
  await page.locator('h1', { hasText: 'New endpoint' }).waitFor();
  await page.fill('#endpoint-url', receiver.url);
  await page.fill('#endpoint-event-types', 'oauth.one');
  await page.selectOption('#auth-type', 'oauth2_client_credentials');
  await page.fill('#auth-token-url', tokens.tokenUrl);
  await page.fill('#auth-client-id', CLIENT.clientId);
  await page.fill('#auth-client-secret', CLIENT.clientSecret);
  await page.fill('#auth-scope', 'webhooks:receive');
  await page.fill('#auth-extra-params', 'resource=hooks');
  await save(page);
  const id = /#\/endpoints\/(ep_\w+)/.exec(page.url())![1]!;
  expect((await endpoint(id)).auth).toEqual({
    type: 'oauth2_client_credentials',
    tokenUrl: tokens.tokenUrl,
    clientId: CLIENT.clientId,
    clientSecret: '••••',
    scope: 'webhooks:receive',
    audience: null,
    extraParams: { resource: 'hooks' },
    clientAuthentication: 'client_secret_basic',
    tokenFetchedAt: null,
  });
  expect(await page.locator('#auth-summary').innerText()).toBe(`OAuth 2.0 client credentials via ${tokens.tokenUrl}, client id ${CLIENT.clientId}, scope webhooks:receive`);
  expect(await page.locator('#token-fetched-at').innerText()).toBe('not yet');

  const sent = await deliveredRequest('oauth.one');
  expect(sent.headers.authorization).toBe(`Bearer ${tokens.issued[0]}`);
  expect(tokens.requests[0]).toEqual({ form: { grant_type: 'client_credentials', scope: 'webhooks:receive', resource: 'hooks' }, basic: CLIENT });
  await waitUntil('the delivery is recorded', async () => (await endpoint(id)).lastSuccessAt !== null);
  const fetchedAt = (await endpoint(id)).auth.tokenFetchedAt as string;
  expect(Date.parse(fetchedAt)).toBeGreaterThan(Date.now() - 30_000);
  await page.click('#refresh');
  await page.locator(`#token-fetched-at time[datetime="${fetchedAt}"]`).waitFor();

  // A proxy with credentials: the password is write-only, the page names the user only.
  await go(page, `#/endpoints/${id}/edit`, 'Edit endpoint');
  expect(await page.locator('#auth-client-secret-masked').innerText()).toBe('••••');
  await page.fill('#proxy-url', 'http://127.0.0.1:3128');
  await page.fill('#proxy-username', 'egress');
  await page.fill('#proxy-password', 'pa55:word');
  await save(page);
  const withProxy = await endpoint(id);
  expect(withProxy.proxy).toEqual({ url: 'http://127.0.0.1:3128', username: 'egress', password: '••••' });
  // The OAuth settings were not sent again, so nothing of them changed.
  expect(withProxy.auth.tokenFetchedAt).toBe(fetchedAt);
  expect(await page.locator('#proxy-summary').innerText()).toBe('http://127.0.0.1:3128 (user egress, password ••••)');
  expect(await page.content()).not.toContain('pa55');

  // Changing the proxy's user needs its password again; the form says so before sending.
  await go(page, `#/endpoints/${id}/edit`, 'Edit endpoint');
  expect(await page.locator('#proxy-password-masked').innerText()).toBe('••••');
  await page.fill('#proxy-username', 'egress2');
  await page.click('#save-endpoint');
  await page.locator('.notice--error', { hasText: 'replace the proxy password too' }).waitFor();
  await page.fill('#proxy-url', '');
  await save(page);
  expect((await endpoint(id)).proxy).toBeNull();
  await page.close();
}, TEST_TIMEOUT_MS);

test('mTLS through the form: the page names the certificate’s CN; a key that does not match is the API’s error at its field', async () => {
  const mine = clientCertificate('postern-form-client');
  const other = clientCertificate('someone-else');
  const page = await tab({ key: org.apiKey });
  await page.click('#new-endpoint');
  await page.locator('h1', { hasText: 'New endpoint' }).waitFor();
  // Nothing listens there: this endpoint is only written and read.
  await page.fill('#endpoint-url', 'https://127.0.0.1:9/hook');
  await page.fill('#endpoint-event-types', 'mtls.none');
  await page.selectOption('#auth-type', 'mtls');
  await page.fill('#auth-certificate', mine.certificate);
  await page.fill('#auth-private-key', other.privateKey);
  await page.click('#save-endpoint');
  await page.locator('.notice--error', { hasText: 'auth.privateKey: does not match auth.certificate' }).waitFor();
  expect(await page.getAttribute('#auth-private-key', 'aria-invalid')).toBe('true');
  await page.fill('#auth-private-key', mine.privateKey);
  await save(page, 'https://127.0.0.1:9/hook');
  const id = /#\/endpoints\/(ep_\w+)/.exec(page.url())![1]!;
  expect((await endpoint(id)).auth).toEqual({ type: 'mtls', certificate: mine.certificate, privateKey: '••••', ca: null });
  expect(await page.locator('#auth-summary').innerText()).toBe('mTLS client certificate (CN postern-form-client)');
  expect(await page.content()).not.toContain('PRIVATE KEY');

  // The key stays while not replaced: adding a CA sends the certificate and CA only.
  await go(page, `#/endpoints/${id}/edit`, 'Edit endpoint');
  expect(await page.locator('#auth-private-key-masked').innerText()).toBe('••••');
  await page.fill('#auth-ca', other.certificate);
  await save(page, 'https://127.0.0.1:9/hook');
  expect((await endpoint(id)).auth).toEqual({ type: 'mtls', certificate: mine.certificate, privateKey: '••••', ca: other.certificate });
  expect(await page.locator('#auth-summary').innerText()).toBe('mTLS client certificate (CN postern-form-client), own CA for the receiver');
  await page.close();
}, TEST_TIMEOUT_MS);

test('portal: a write session edits the request settings; a read-only one sees no controls', async () => {
  const writer = await tab({ portalUrl: (await mint(['webhooks:read', 'webhooks:write'])).url });
  await go(writer, `#/endpoints/${endpointId}`, receiver.url);
  await writer.click('#edit-endpoint');
  await writer.locator('h1', { hasText: 'Edit endpoint' }).waitFor();
  await writer.click('#add-header');
  await writer.fill('#header-name-1', 'X-Portal');
  await writer.fill('#header-value-1', 'yes');
  await writer.selectOption('#auth-type', 'none');
  await save(writer);
  const changed = await endpoint(endpointId);
  expect(changed.headers).toEqual([
    { name: 'X-Api-Key', value: '••••', secret: true },
    { name: 'X-Portal', value: 'yes', secret: false },
  ]);
  expect(changed.auth).toBeNull();
  expect(await writer.locator('#auth-summary').innerText()).toBe('none');
  const sent = await deliveredRequest('rs.portal');
  expect(sent.headers['x-api-key']).toBe('k_live_456');
  expect(sent.headers.authorization).toBeUndefined();
  await writer.close();

  const reader = await tab({ portalUrl: (await mint(['webhooks:read'])).url });
  await go(reader, `#/endpoints/${endpointId}`, receiver.url);
  expect(await reader.locator('#static-headers').innerText()).toMatch(/X-Api-Key: ••••[\s\S]*X-Portal: yes/);
  expect(await reader.locator('#edit-endpoint').count()).toBe(0);
  await go(reader, `#/endpoints/${endpointId}/edit`, 'Edit endpoint');
  await reader.locator('.error-box', { hasText: 'read-only' }).waitFor();
  for (const control of ['#add-header', '#auth-type', '#proxy-url', '#save-endpoint']) expect(await reader.locator(control).count()).toBe(0);
  await reader.close();
}, TEST_TIMEOUT_MS);

test('no script errors on any page', () => {
  expect(pageErrors).toEqual([]);
});
