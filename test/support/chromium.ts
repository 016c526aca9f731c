import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

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
