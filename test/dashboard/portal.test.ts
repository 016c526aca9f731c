import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { hashApiKey } from '@postern/ingest';
import { TEST_ADMIN_TOKEN, startPostern, type TestPostern } from '../support/postern.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The customer portal (issue 15, item 4): a platform mints a short-lived session for one org
 * (admin token), opens the URL it gets, and lands in the dashboard signed in for that org only —
 * no key pasted, the token gone from the address bar, another org's ids 404, read-only by default.
 * Revoked and expired sessions end on a page of their own and their calls get 401 with a code.
 * The portal page may be framed only by the origins listed (`PORTAL_FRAME_ANCESTORS`).
 */

// Functions passed to page.evaluate run in the browser; the tests' tsconfig has no DOM types.
declare const location: { hash: string; href: string };
declare const sessionStorage: { getItem(key: string): string | null };
declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };

const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

const DEAD_URL = 'http://127.0.0.1:9/hook';

let postern: TestPostern;
let chromiumInstance: TestBrowser | undefined;
let browser: BrowserContext;
/** Added to ingest's clock, so a session can be made to expire without waiting. */
let clockOffsetMs = 0;
let orgA: { id: string; apiKey: string };
let orgB: { id: string; apiKey: string };
let endpointA: { id: string; url: string };
let endpointB: { id: string; url: string };
/** Parent pages that frame the portal: one on a listed origin, one on an unlisted one. */
let listedParent: Server;
let unlistedParent: Server;
const pageErrors: string[] = [];

function parentServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><title>Platform</title><h1>Your webhooks</h1><iframe id="portal" title="Webhooks" src="${src.replace(/"/g, '&quot;')}" width="1100" height="700"></iframe>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const originOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

async function mint(orgId: string, body: Record<string, unknown> = {}) {
  const r = await postern.api('POST', `/v1/orgs/${orgId}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body });
  if (r.status !== 201) throw new Error(`mint: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; orgId: string; token: string; url: string; scopes: string[]; expiresAt: string; createdAt: string; revokedAt: null };
}

async function newTab(): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  return page;
}

beforeAll(async () => {
  listedParent = await parentServer();
  unlistedParent = await parentServer();
  postern = await startPostern({ sender: false, ingestClock: { now: () => Date.now() + clockOffsetMs }, portalFrameAncestors: [originOf(listedParent)] });
  orgA = await postern.createOrg('customer a');
  orgB = await postern.createOrg('customer b');
  endpointA = await postern.createEndpoint(orgA.apiKey, { url: `${DEAD_URL}/a`, description: 'billing of customer a' });
  endpointB = await postern.createEndpoint(orgB.apiKey, { url: `${DEAD_URL}/b`, description: 'billing of customer b' });
  chromiumInstance = await launchChromium({ viewport: { width: 1280, height: 900 } });
  browser = chromiumInstance.context;
});

afterAll(async () => {
  await chromiumInstance?.close();
  await postern?.close();
  for (const server of [listedParent, unlistedParent]) await new Promise((r) => server?.close(r));
});

describe('minting (admin token)', () => {
  test('default: read-only, an hour, a token shown once and a URL with the token in its fragment', async () => {
    const before = Date.now();
    const s = await mint(orgA.id);
    expect(s).toMatchObject({ orgId: orgA.id, scopes: ['webhooks:read'], revokedAt: null });
    expect(s.id).toMatch(/^ps_/);
    expect(s.token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
    expect(s.url).toBe(`${postern.baseUrl}/dashboard/portal#session=${s.token}`);
    const ttlMs = Date.parse(s.expiresAt) - Date.parse(s.createdAt);
    expect(ttlMs).toBe(3_600_000);
    expect(Date.parse(s.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    // Stored as its hash: the token itself is nowhere in Redis, and the session's keys expire by themselves.
    const lookupKey = postern.store.keys.portalSessionByToken(hashApiKey(s.token));
    expect(await postern.redis.hget(lookupKey, 'sessionId')).toBe(s.id);
    expect(await postern.redis.pttl(lookupKey)).toBeGreaterThan(3_600_000);
    expect(await postern.redis.pttl(postern.store.keys.portalSession(orgA.id, s.id))).toBeGreaterThan(3_600_000);
    expect(JSON.stringify(await postern.redis.hgetall(postern.store.keys.portalSession(orgA.id, s.id)))).not.toContain(s.token);
    // Reading it back never shows the token.
    const read = await postern.api('GET', `/v1/orgs/${orgA.id}/portal-sessions/${s.id}`, { key: TEST_ADMIN_TOKEN });
    expect(read.body).toEqual({ id: s.id, orgId: orgA.id, scopes: ['webhooks:read'], mode: 'customer', createdAt: s.createdAt, expiresAt: s.expiresAt, revokedAt: null });
  });

  test('ttlSeconds and scopes are taken as given', async () => {
    const s = await mint(orgA.id, { ttlSeconds: 600, scopes: ['webhooks:write', 'webhooks:read'] });
    expect(s.scopes).toEqual(['webhooks:read', 'webhooks:write']);
    expect(Date.parse(s.expiresAt) - Date.parse(s.createdAt)).toBe(600_000);
  });

  test.each([
    [{ ttlSeconds: 86_401 }, /^ttlSeconds: .*60 to 86400/],
    [{ ttlSeconds: 59 }, /^ttlSeconds: /],
    [{ ttlSeconds: 1.5 }, /^ttlSeconds: /],
    [{ ttlSeconds: '600' }, /^ttlSeconds: /],
    [{ scopes: [] }, /^scopes: /],
    [{ scopes: ['events:write'] }, /^scopes\.0: .*webhooks:read, webhooks:write/],
    [{ colour: 'red' }, /unknown field "colour"/],
  ])('%j → 400 naming the field', async (body, message) => {
    const r = await postern.api('POST', `/v1/orgs/${orgA.id}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body });
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 400, code: 'invalid_request' });
    expect(r.body.error.message).toMatch(message);
  });

  test('without the admin token → 401, an API key is not enough; an unknown org → 404', async () => {
    for (const key of [undefined, orgA.apiKey, 'not-the-admin-token-at-all']) {
      const r = await postern.api('POST', `/v1/orgs/${orgA.id}/portal-sessions`, { key, body: {} });
      expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
    }
    const r = await postern.api('POST', '/v1/orgs/org_00000000000000000000000000/portal-sessions', { key: TEST_ADMIN_TOKEN, body: {} });
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 404, code: 'not_found' });
    const other = await postern.api('GET', `/v1/orgs/${orgB.id}/portal-sessions/${(await mint(orgA.id)).id}`, { key: TEST_ADMIN_TOKEN });
    expect(other.status).toBe(404);
  });
});

describe('the token as an API credential', () => {
  test('works for its org within its scopes; another org is 404; no events, no API keys', async () => {
    const { token, id } = await mint(orgA.id);
    const me = await postern.api('GET', '/v1/me', { key: token });
    expect(me.body).toMatchObject({ orgId: orgA.id, keyId: null, scopes: ['webhooks:read'], portalSession: { id } });
    const list = await postern.api('GET', '/v1/endpoints', { key: token });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([endpointA.id]);
    const foreign = await postern.api('GET', `/v1/endpoints/${endpointB.id}`, { key: token });
    expect({ status: foreign.status, message: foreign.body.error.message }).toEqual({ status: 404, message: 'endpoint not found' });
    const pause = await postern.api('POST', `/v1/endpoints/${endpointA.id}/pause`, { key: token });
    expect({ status: pause.status, code: pause.body.error.code }).toEqual({ status: 403, code: 'insufficient_scope' });
    const event = await postern.api('POST', '/v1/events', { key: token, body: { type: 'invoice.paid', data: {} } });
    expect({ status: event.status, code: event.body.error.code }).toEqual({ status: 403, code: 'insufficient_scope' });

    const writer = (await mint(orgA.id, { scopes: ['webhooks:read', 'webhooks:write'] })).token;
    for (const [method, path, body] of [['GET', '/v1/api-keys', undefined], ['POST', '/v1/api-keys', { name: 'escape', scopes: ['webhooks:read'] }]] as const) {
      const r = await postern.api(method, path, { key: writer, body });
      expect({ path, status: r.status, code: r.body.error.code }).toEqual({ path, status: 403, code: 'api_key_required' });
    }
    const paused = await postern.api('POST', `/v1/endpoints/${endpointA.id}/pause`, { key: writer });
    expect(paused.status).toBe(200);
    expect((await postern.api('POST', `/v1/endpoints/${endpointA.id}/resume`, { key: writer })).status).toBe(200);
    expect((await postern.api('POST', `/v1/endpoints/${endpointB.id}/pause`, { key: writer })).status).toBe(404);
  });

  test('revoked: refused at once with session_revoked; revoking again keeps the first time', async () => {
    const s = await mint(orgA.id);
    expect((await postern.api('GET', '/v1/endpoints', { key: s.token })).status).toBe(200);
    const revoked = await postern.api('DELETE', `/v1/orgs/${orgA.id}/portal-sessions/${s.id}`, { key: TEST_ADMIN_TOKEN });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    const r = await postern.api('GET', '/v1/endpoints', { key: s.token });
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 401, code: 'session_revoked' });
    const again = await postern.api('DELETE', `/v1/orgs/${orgA.id}/portal-sessions/${s.id}`, { key: TEST_ADMIN_TOKEN });
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
    expect((await postern.api('DELETE', `/v1/orgs/${orgB.id}/portal-sessions/${s.id}`, { key: TEST_ADMIN_TOKEN })).status).toBe(404);
  });

  test('an unknown token → 401 unauthorized', async () => {
    const r = await postern.api('GET', '/v1/endpoints', { key: `pst_${'x'.repeat(43)}` });
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
  });
});

describe('in the browser', () => {
  test('the URL signs in without a key, for its org only, and the token leaves the address bar', async () => {
    const s = await mint(orgA.id);
    const page = await newTab();
    await page.goto(s.url);
    await page.locator('h1', { hasText: 'Endpoints' }).waitFor();
    await page.locator('a', { hasText: endpointA.url }).waitFor();
    expect(await page.locator('#api-key').count()).toBe(0);
    expect(await page.locator('a', { hasText: endpointB.url }).count()).toBe(0);
    expect(page.url()).toBe(`${postern.baseUrl}/dashboard/portal#/endpoints`);
    expect(page.url()).not.toContain(s.token);
    expect(await page.locator('[data-testid="key-summary"]').innerText()).toMatch(/Portal session until .*read-only/);
    // Read-only: no write buttons; no API keys page.
    expect(await page.locator('a[data-nav="api-keys"]').isVisible()).toBe(false);
    await page.locator('a', { hasText: endpointA.url }).click();
    await page.locator('h1', { hasText: endpointA.url }).waitFor();
    expect(await page.locator('#pause').count()).toBe(0);
    // Another org's endpoint, by its id: as if it did not exist.
    await page.evaluate((id) => {
      location.hash = `#/endpoints/${id}`;
    }, endpointB.id);
    await page.locator('.error-box', { hasText: 'does not exist, or it belongs to another organisation' }).waitFor();
    expect(await page.locator('body').innerText()).not.toContain(endpointB.url);
    // A reload keeps the session (this tab's storage), without the token in the URL.
    await page.evaluate(() => {
      location.hash = '#/endpoints';
    });
    await page.reload();
    await page.locator('a', { hasText: endpointA.url }).waitFor();
    await page.close();
  });

  test('a revoked session ends on a page that says so', async () => {
    const s = await mint(orgA.id);
    const page = await newTab();
    await page.goto(s.url);
    await page.locator('a', { hasText: endpointA.url }).waitFor();
    await postern.api('DELETE', `/v1/orgs/${orgA.id}/portal-sessions/${s.id}`, { key: TEST_ADMIN_TOKEN });
    await page.evaluate(() => {
      location.hash = '#/events';
    });
    const ended = page.locator('[data-testid="session-ended"]');
    await ended.waitFor();
    expect(await ended.getAttribute('data-reason')).toBe('session_revoked');
    expect(await ended.innerText()).toContain('This session was ended');
    expect(await page.locator('#api-key').count()).toBe(0);
    expect(await page.evaluate(() => sessionStorage.getItem('postern.apiKey'))).toBeNull();
    await page.close();
  });

  test('on a phone: the portal and its ended page fit the screen (screenshots in test-artifacts/screenshots/)', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const s = await mint(orgA.id);
    const page = await newTab();
    await page.setViewportSize({ width: 375, height: 812 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.goto(s.url);
    await page.locator('a', { hasText: endpointA.url }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-375.png'), fullPage: true });
    expect(await overflow()).toBeLessThanOrEqual(0);
    await postern.api('DELETE', `/v1/orgs/${orgA.id}/portal-sessions/${s.id}`, { key: TEST_ADMIN_TOKEN });
    await page.evaluate(() => {
      location.hash = '#/events';
    });
    await page.locator('[data-testid="session-ended"]').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-ended-375.png'), fullPage: true });
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.close();
  });

  test('the portal page without a session says how to get one, and offers no key form', async () => {
    const page = await newTab();
    await page.goto(`${postern.baseUrl}/dashboard/portal`);
    await page.locator('[data-testid="session-ended"]', { hasText: 'No session' }).waitFor();
    expect(await page.locator('#api-key').count()).toBe(0);
    await page.close();
  });
});

describe('framing', () => {
  test('the portal page names the listed origins in frame-ancestors; the rest of the dashboard is never framed', async () => {
    const portal = await fetch(`${postern.baseUrl}/dashboard/portal`);
    expect(portal.status).toBe(200);
    expect(portal.headers.get('content-security-policy')).toMatch(new RegExp(`frame-ancestors ${originOf(listedParent)}$`));
    expect(await portal.text()).toContain('js/main.js');
    const index = await fetch(`${postern.baseUrl}/dashboard/`);
    expect(index.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'$/);
  });

  async function portalFrame(page: Page): Promise<Frame> {
    const handle = await page.waitForSelector('#portal');
    return waitUntil('the iframe has a frame', async () => (await handle.contentFrame()) ?? undefined);
  }

  test('a page on a listed origin shows the portal in an iframe', async () => {
    const s = await mint(orgA.id);
    const page = await newTab();
    await page.goto(`${originOf(listedParent)}/?src=${encodeURIComponent(s.url)}`);
    const frame = await portalFrame(page);
    await frame.locator('a', { hasText: endpointA.url }).waitFor();
    expect(frame.url()).toBe(`${postern.baseUrl}/dashboard/portal#/endpoints`);
    await page.close();
  });

  test('a page on an unlisted origin is refused: the frame never loads the portal', async () => {
    const s = await mint(orgA.id);
    const page = await newTab();
    const refusals: string[] = [];
    page.on('console', (msg) => {
      if (/frame-ancestors/.test(msg.text())) refusals.push(msg.text());
    });
    const portalResponse = page.waitForResponse((r) => r.url().startsWith(`${postern.baseUrl}/dashboard/portal`));
    await page.goto(`${originOf(unlistedParent)}/?src=${encodeURIComponent(s.url)}`);
    const response = await portalResponse;
    expect(response.headers()['content-security-policy']).toContain(`frame-ancestors ${originOf(listedParent)}`);
    const frame = await portalFrame(page);
    // Chromium replaces a frame its CSP refuses with an error page, and says why on the console.
    await waitUntil('Chromium refused to frame the portal', () => refusals.length > 0 && frame.url().startsWith('chrome-error://'));
    expect(refusals[0]).toContain(originOf(listedParent));
    expect(await frame.locator('a', { hasText: endpointA.url }).count()).toBe(0);
    await page.close();
  });
});

describe('expiry', () => {
  test('after expiresAt: API calls get 401 session_expired and the dashboard shows the expired page', async () => {
    const s = await mint(orgA.id, { ttlSeconds: 60 });
    const page = await newTab();
    await page.goto(s.url);
    await page.locator('a', { hasText: endpointA.url }).waitFor();
    clockOffsetMs = 61_000;
    const r = await postern.api('GET', '/v1/endpoints', { key: s.token });
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 401, code: 'session_expired' });
    await page.evaluate(() => {
      location.hash = '#/events';
    });
    const ended = page.locator('[data-testid="session-ended"]');
    await ended.waitFor();
    expect(await ended.getAttribute('data-reason')).toBe('session_expired');
    expect(await ended.innerText()).toContain('This session has expired');
    // The platform still sees it, until a day after.
    const read = await postern.api('GET', `/v1/orgs/${orgA.id}/portal-sessions/${s.id}`, { key: TEST_ADMIN_TOKEN });
    expect(read.body.expiresAt).toBe(s.expiresAt);
    await page.close();
  });

  test('no script errors on any portal page', () => {
    expect(pageErrors).toEqual([]);
  });
});
