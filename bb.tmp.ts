import { chromium } from 'playwright-core';
import { startPostern, TEST_ADMIN_TOKEN } from './test/support/postern.ts';
for (const ro of [true, false]) {
const p = await startPostern({ sender: false, bullBoardReadOnly: ro });
const { apiKey } = await p.createOrg();
await p.createEndpoint(apiKey, { url: 'http://127.0.0.1:9/hook' });
for (let i = 0; i < 3; i++) await p.api('POST', '/v1/events', { key: apiKey, body: { type: 'a.b', data: i } });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const ctx = await browser.newContext({ httpCredentials: { username: 'admin', password: TEST_ADMIN_TOKEN } });
await ctx.route('**/*', (route) => (route.request().url().startsWith(p.baseUrl) ? route.continue() : route.abort()));
const page = await ctx.newPage();
await page.goto(p.baseUrl + '/admin/queues/queue/deliveries?status=waiting');
await page.getByText(/dlv_/).first().waitFor();
const buttons = await page.getByRole('button').allInnerTexts();
console.log(ro, JSON.stringify(buttons));
await browser.close();
await p.close();
}
