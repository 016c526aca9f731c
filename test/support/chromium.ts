import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium: `apt-get install -y chromium` (bash .ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Flags for headless Chromium on these machines: no sandbox (tests run as root), and no
 * background networking, component updates or sync, whose connections this machine refuses.
 */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A headless Chromium with a fresh profile; `close` closes it and removes the profile. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Launches headless Chromium at {@link CHROMIUM} in a fresh profile directory.
 *
 * @param options - extra playwright context options (viewport, HTTP credentials…)
 * @throws Error naming the install command when Chromium is missing
 */
export async function launchChromium(options: Parameters<typeof chromium.launchPersistentContext>[1] = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (bash .ci/run does so on CI).`);
  }
  const profileDir = mkdtempSync(join(tmpdir(), 'postern-chromium-'));
  const context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, ...options });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

/**
 * Submits the dashboard's endpoint form and waits for the endpoint's page (its `h1` holds
 * `heading`); throws with the notice's text when the form is refused instead. A notice left from an
 * earlier refusal on the page is not this save's answer: only the heading, or an error notice that
 * appears after the click, is.
 */
export async function saveEndpointForm(page: Page, heading: string | RegExp): Promise<void> {
  const stale = await page.$$('.notice--error');
  await page.click('#save-endpoint');
  const saved = page.locator('h1', { hasText: heading }).waitFor().then(() => 'saved' as const);
  const refused = page
    .waitForFunction((old: unknown[]) => {
      const { document } = globalThis as unknown as { document: { querySelectorAll(selector: string): Iterable<unknown> } };
      return [...document.querySelectorAll('.notice--error')].some((n) => !old.includes(n));
    }, stale)
    .then(() => 'refused' as const);
  // The loser of the race keeps waiting until the page closes or its timeout: its end is not news.
  saved.catch(() => undefined);
  refused.catch(() => undefined);
  if ((await Promise.race([saved, refused])) === 'refused') throw new Error(`the form was refused: ${await page.locator('.notice--error').last().innerText()}`);
}
