import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { REPO_ROOT } from '../support/spawn-app.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';

/**
 * Issue 6 Bull Board: `/admin/queues` on ingest, behind the admin token (Bearer, or HTTP Basic for
 * browsers), read-only by default; opened in headless Chromium, it shows the deliveries queue and
 * its counts. CI installs Chromium (`.ci/run`); without it this test fails, it does not skip.
 */

const BOARD = '/admin/queues';

let postern: TestPostern;
let chromiumInstance: TestBrowser | undefined;
let key: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  key = (await postern.createOrg()).apiKey;
  // Nothing listens on port 9: without a sender, each event's delivery waits in the queue.
  await postern.createEndpoint(key, { url: 'http://127.0.0.1:9/hook' });
  for (let i = 0; i < 3; i++) expect((await postern.api('POST', '/v1/events', { key, body: { type: 'board.check', data: { i } } })).status).toBe(202);
});

afterAll(async () => {
  await chromiumInstance?.close();
  await postern.close();
});

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('auth', () => {
  test.each([
    ['no credentials', undefined],
    ['a wrong Basic password', basic('admin', 'not-the-token-at-all')],
    ['the admin token as Basic user name', basic(TEST_ADMIN_TOKEN, '')],
    ['a wrong Bearer token', 'Bearer not-the-token-at-all'],
  ])('401 with a Basic challenge for %s', async (_what, authorization) => {
    const res = await fetch(`${postern.baseUrl}${BOARD}`, { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Postern"');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  test("an org's API key is not the admin token", async () => {
    const res = await fetch(`${postern.baseUrl}${BOARD}/api/queues`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(401);
  });

  test.each([
    ['Bearer', `Bearer ${TEST_ADMIN_TOKEN}`],
    ['Basic, any user name', basic('anyone', TEST_ADMIN_TOKEN)],
  ])('the admin token as %s opens the board', async (_what, authorization) => {
    const page = await fetch(`${postern.baseUrl}${BOARD}`, { headers: { authorization } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const api = await fetch(`${postern.baseUrl}${BOARD}/api/queues`, { headers: { authorization } });
    expect(api.status).toBe(200);
    const { queues } = (await api.json()) as { queues: { name: string; counts: Record<string, number>; readOnlyMode: boolean }[] };
    const queue = queues.find((q) => q.name === 'deliveries')!;
    expect(queue.counts.waiting).toBe(3);
    expect(queue.readOnlyMode).toBe(true);
  });

  test('read-only by default: actions are refused', async () => {
    const res = await fetch(`${postern.baseUrl}${BOARD}/api/queues/deliveries/pause`, { method: 'PUT', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    expect(res.status).toBe(405);
    expect(await postern.queue.isPaused()).toBe(false);
  });

  test('BULL_BOARD_READ_ONLY=false allows actions', async () => {
    const writable = await startPostern({ sender: false, bullBoardReadOnly: false });
    try {
      const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
      expect((await fetch(`${writable.baseUrl}${BOARD}/api/queues/deliveries/pause`, { method: 'PUT', headers })).status).toBe(200);
      expect(await writable.queue.isPaused()).toBe(true);
      expect((await fetch(`${writable.baseUrl}${BOARD}/api/queues/deliveries/resume`, { method: 'PUT', headers })).status).toBe(200);
      expect(await writable.queue.isPaused()).toBe(false);
    } finally {
      await writable.close();
    }
  });
});

test('headless Chromium shows the deliveries queue and its counts', async () => {
  const tmp = path.join(REPO_ROOT, 'test-artifacts');
  mkdirSync(tmp, { recursive: true });
  chromiumInstance = await launchChromium({ httpCredentials: { username: 'admin', password: TEST_ADMIN_TOKEN } });
  const context = chromiumInstance.context;
  // Only Postern itself: the board's web-font link would otherwise leave the machine.
  await context.route('**/*', (route) => (route.request().url().startsWith(postern.baseUrl) ? route.continue() : route.abort()));
  const page = await context.newPage();
  const apiStatuses: number[] = [];
  page.on('response', (r) => {
    if (r.url().includes(`${BOARD}/api/`)) apiStatuses.push(r.status());
  });

  const response = await page.goto(`${postern.baseUrl}${BOARD}`);
  expect(response?.status()).toBe(200);
  const card = page.locator('a, div, section', { hasText: /^deliveries/ }).filter({ hasText: '3 Jobs' }).first();
  await card.waitFor({ timeout: 15_000 });
  // The status tabs show the waiting count.
  await page.getByText(/WAITING\s*3/i).first().waitFor({ timeout: 5_000 });
  const text = await page.innerText('body');
  expect(text).toContain('deliveries');
  expect(text).toMatch(/3 Jobs/);
  await page.screenshot({ path: path.join(tmp, 'bull-board-overview.png'), fullPage: true });

  // The queue's own page lists its waiting jobs, with no actions while read-only.
  await page.goto(`${postern.baseUrl}${BOARD}/queue/deliveries?status=waiting`);
  await page.getByText(/dlv_/).first().waitFor({ timeout: 15_000 });
  expect(await page.getByText(/dlv_/).count()).toBeGreaterThanOrEqual(3);
  // Writable, each job has edit, duplicate and remove buttons and the queue an actions menu.
  expect(await page.locator('button:has(svg.lucide-trash-2), button:has(svg.lucide-pencil), button:has(svg.lucide-files), button:has(svg.lucide-ellipsis-vertical)').count()).toBe(0);
  await page.screenshot({ path: path.join(tmp, 'bull-board-queue.png'), fullPage: true });

  expect(apiStatuses.length).toBeGreaterThan(0);
  expect(apiStatuses.every((s) => s === 200)).toBe(true);
}, 60_000);
