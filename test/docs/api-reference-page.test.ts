import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { API_REFERENCE_PATH, API_ROUTES } from '@postern/ingest';
import { launchChromium, type TestBrowser } from '../support/chromium.js';
import { startPostern, type TestPostern } from '../support/postern.js';

/**
 * `GET /docs/api` renders the OpenAPI document ingest serves, in headless Chromium, with nothing
 * loaded from another origin and no script error. A screenshot goes to
 * test-artifacts/screenshots/api-reference-1280.png.
 */

const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

// Functions passed to page.evaluate run in the browser; the tests' tsconfig has no DOM types.
declare const document: { querySelectorAll(selector: string): { length: number } };

let postern: TestPostern;
let chromium: TestBrowser | undefined;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  chromium = await launchChromium({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await chromium?.close();
  await postern?.close();
});

/** What the browser did for the page: script errors and console errors, requests finished and failed. */
interface PageRecord {
  page: Page;
  errors: string[];
  finished: string[];
  failed: { url: string; error: string }[];
}

/** Opens the page in a fresh tab, recording what it loads and what goes wrong. */
async function openReference(): Promise<PageRecord> {
  const page = await chromium!.context.newPage();
  const errors: string[] = [];
  const finished: string[] = [];
  const failed: { url: string; error: string }[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || /Content Security Policy|Refused to/i.test(msg.text())) errors.push(msg.text());
  });
  page.on('requestfinished', (req) => finished.push(req.url()));
  page.on('requestfailed', (req) => failed.push({ url: req.url(), error: req.failure()?.errorText ?? '' }));
  await page.goto(`${postern.baseUrl}${API_REFERENCE_PATH}`);
  return { page, errors, finished, failed };
}

test('the page renders every operation of /openapi.json, from this origin only', async () => {
  const { page, errors, finished, failed } = await openReference();
  try {
    await page.locator('h1', { hasText: 'Postern API' }).waitFor({ timeout: 20_000 });
    // One operation title each, as Redoc renders them (h2 per operation).
    const sendEvent = API_ROUTES.find((r) => r.method === 'post' && r.path === '/v1/events')!;
    await page.locator('h2', { hasText: sendEvent.summary }).first().waitFor({ timeout: 10_000 });
    const operations = await page.evaluate(() => document.querySelectorAll('[data-section-id^="operation/"]').length);
    expect(operations).toBe(API_ROUTES.length);
    const origin = new URL(postern.baseUrl).origin;
    const local = (url: string) => url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith(`blob:${origin}/`);
    expect(finished).toContain(`${origin}/openapi.json`);
    expect(finished.filter((url) => !local(url))).toEqual([]);
    // Redoc's sidebar shows its maker's logo from a CDN: the page's CSP refuses it before any request.
    const refused = failed.filter((f) => !local(f.url));
    expect(refused).toEqual(refused.map((f) => ({ url: f.url, error: 'csp' })));
    expect(failed.filter((f) => local(f.url))).toEqual([]);
    const refusedImage = (text: string) => refused.some((f) => text.includes(`image '${f.url}' violates`));
    expect(errors.filter((text) => !refusedImage(text))).toEqual([]);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'api-reference-1280.png') });
  } finally {
    await page.close();
  }
}, 60_000);

test('the page and its scripts are sent with a Content-Security-Policy; /docs/api/ redirects to /docs/api', async () => {
  const page = await fetch(`${postern.baseUrl}${API_REFERENCE_PATH}`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  const bundle = await fetch(`${postern.baseUrl}${API_REFERENCE_PATH}/redoc.standalone.js`);
  expect(bundle.status).toBe(200);
  expect(bundle.headers.get('content-type')).toMatch(/javascript/);
  expect((await bundle.text()).length).toBeGreaterThan(100_000);
  const slash = await fetch(`${postern.baseUrl}${API_REFERENCE_PATH}/`, { redirect: 'manual' });
  expect(slash.status).toBe(301);
  expect(new URL(slash.headers.get('location')!, `${postern.baseUrl}${API_REFERENCE_PATH}/`).pathname).toBe(API_REFERENCE_PATH);
  const unknown = await fetch(`${postern.baseUrl}${API_REFERENCE_PATH}/nothing.js`);
  expect(unknown.status).toBe(404);
});
