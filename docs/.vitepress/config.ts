import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';
import { githubSlug } from './github-slug.js';
import { linkedRepoFiles } from './linked-files.js';
import { pagesOutsideSidebar, sidebar, sitePages } from './sidebar.js';

/**
 * The documentation site: `npm run docs:build` renders README.md (the home page) and docs/ to
 * static HTML in docs/.vitepress/dist/, offline; `npm run docs:preview` serves the result.
 * The pages are read from the repository root, so their relative links are the ones GitHub
 * follows. The build fails on a link to a page that does not exist (VitePress's default), and
 * on a page the sidebar leaves out.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const missing = pagesOutsideSidebar(REPO_ROOT);
if (missing.length > 0) throw new Error(`docs/.vitepress/sidebar.ts: pages missing from the sidebar: ${missing.join(', ')}`);

/** Everything at the top of the repository except README.md and docs/ stays out of the site. */
const outsideSite = readdirSync(REPO_ROOT, { withFileTypes: true })
  .filter((entry) => entry.name !== 'README.md' && entry.name !== 'docs')
  .map((entry) => (entry.isDirectory() ? `${entry.name}/**` : entry.name));

export default defineConfig({
  title: 'Postern',
  description: 'Webhook delivery: events in, signed deliveries out, retried on schedule.',
  lang: 'en',
  srcDir: '..',
  srcExclude: outsideSite,
  rewrites: { 'README.md': 'index.md' },
  cleanUrls: false,
  // Links to a running Postern (http://localhost:3000/dashboard/) are not pages of the site; every
  // other link to a page that does not exist still fails the build.
  ignoreDeadLinks: 'localhostLinks',
  lastUpdated: false,
  // Shiki has no PromQL grammar: docs/operations.md's queries show as plain text (the build says so).
  markdown: { anchor: { slugify: githubSlug } },
  themeConfig: {
    nav: [
      { text: 'Getting started', link: '/docs/getting-started' },
      { text: 'HTTP API', link: '/docs/api' },
    ],
    sidebar: sidebar(REPO_ROOT),
    outline: [2, 3],
    search: { provider: 'local' },
  },
  buildEnd(site) {
    for (const file of linkedRepoFiles(REPO_ROOT, sitePages(REPO_ROOT))) {
      const target = path.join(site.outDir, file);
      mkdirSync(path.dirname(target), { recursive: true });
      copyFileSync(path.join(REPO_ROOT, file), target);
    }
  },
});
