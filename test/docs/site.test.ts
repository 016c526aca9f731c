import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { githubSlug } from '../../docs/.vitepress/github-slug.js';
import { pagesOutsideSidebar, sidebar, SIDEBAR_GROUPS, sitePages } from '../../docs/.vitepress/sidebar.js';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * The documentation site (`npm run docs:build`, VitePress) shows every page in its sidebar, and
 * its anchors are GitHub's, so one relative link works in both places. The build itself runs in
 * CI (.ci/run), where it fails on a link to a missing page and, after it, on a missing anchor.
 */

test('every page of the site is in the sidebar, and every sidebar entry is a page', () => {
  expect(pagesOutsideSidebar(REPO_ROOT)).toEqual([]);
  const pages = sitePages(REPO_ROOT);
  expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/getting-started.md', 'docs/api.md']));
  for (const entry of SIDEBAR_GROUPS.flatMap((g) => g.pages)) {
    if (entry.endsWith('/*')) expect(existsSync(path.join(REPO_ROOT, entry.slice(0, -2)))).toBe(true);
    else expect(pages).toContain(entry);
  }
  const links = JSON.stringify(sidebar(REPO_ROOT)).match(/"link":"[^"]+"/g) ?? [];
  expect(links.length).toBe(pages.length);
});

test('headings get the anchors GitHub gives them', () => {
  expect(githubSlug('HTTP API (v1)')).toBe('http-api-v1');
  expect(githubSlug('Request settings: headers, auth and proxy')).toBe('request-settings-headers-auth-and-proxy');
  expect(githubSlug('snake_case — and ≤ 300 lines')).toBe('snake_case--and--300-lines');
});

test('CI builds the site (beside the type check) and fails when the build fails', () => {
  const ci = readFileSync(path.join(REPO_ROOT, '.ci/run'), 'utf8');
  expect(ci).toMatch(/^npm run docs:build\b.*&$/m);
  expect(ci).toMatch(/^docs_pid=\$!$/m);
  expect(ci).toMatch(/^wait "\$docs_pid" \|\| docs_status=\$\?$/m);
  expect(ci).toMatch(/^ {2}exit "\$docs_status"$/m);
});
