import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The documentation site's navigation: groups of pages, by their path from the repository root
 * (the site's source folder, so the same relative links work on GitHub and on the site). Every
 * page of docs/ appears once: `pagesOutsideSidebar` names any that does not, and the site's
 * build fails on it. The reference pages under docs/api/ are listed as the generator writes them.
 */
export const SIDEBAR_GROUPS: readonly { text: string; pages: readonly string[] }[] = [
  { text: 'Start here', pages: ['README.md', 'docs/getting-started.md', 'docs/concepts.md', 'docs/receiving-webhooks.md'] },
  {
    text: 'Delivering',
    pages: ['docs/policies.md', 'docs/request-settings.md', 'docs/transformations.md', 'docs/event-catalog.md', 'docs/live-deliveries.md', 'docs/erasure-and-export.md', 'docs/audit-log.md'],
  },
  { text: 'Dashboard and tools', pages: ['docs/console-and-portal.md', 'docs/portal.md', 'docs/cli.md'] },
  { text: 'HTTP API', pages: ['docs/api.md', 'docs/api/*'] },
  { text: 'Running Postern', pages: ['docs/configuration.md', 'docs/operations.md', 'docs/scaling.md', 'docs/production-redis.md', 'docs/benchmarks.md'] },
  { text: 'Inside Postern', pages: ['docs/architecture.md', 'docs/development.md'] },
];

/** A sidebar entry as VitePress takes it. */
export interface SidebarItem {
  text: string;
  link?: string;
  items?: SidebarItem[];
  collapsed?: boolean;
}

/** Every page of the site, from the repository root: README.md and docs/**\/*.md, sorted. */
export function sitePages(repoRoot: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
      if (entry.name.startsWith('.')) return [];
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return walk(rel);
      return entry.name.endsWith('.md') ? [rel] : [];
    });
  return ['README.md', ...walk('docs')].sort();
}

/** The pages a group names: a `dir/*` entry stands for that folder's pages, in the generator's order (by title). */
function expand(entry: string, repoRoot: string): string[] {
  if (!entry.endsWith('/*')) return [entry];
  const dir = entry.slice(0, -2);
  return sitePages(repoRoot)
    .filter((p) => path.posix.dirname(p) === dir)
    .sort((a, b) => pageTitle(repoRoot, a).localeCompare(pageTitle(repoRoot, b)));
}

/** A page's first `# ` heading, without inline code marks. */
export function pageTitle(repoRoot: string, page: string): string {
  const heading = /^# (.+)$/m.exec(readFileSync(path.join(repoRoot, page), 'utf8'))?.[1];
  if (!heading) throw new Error(`${page}: no # heading to name it in the sidebar`);
  return heading.replace(/`/g, '');
}

/** Pages of the site the sidebar does not name. */
export function pagesOutsideSidebar(repoRoot: string): string[] {
  const listed = new Set(SIDEBAR_GROUPS.flatMap((g) => g.pages.flatMap((p) => expand(p, repoRoot))));
  return sitePages(repoRoot).filter((p) => !listed.has(p));
}

/** The site's URL of a page: README.md is the home page; the others keep their path. */
export function pageLink(page: string): string {
  return page === 'README.md' ? '/' : `/${page.replace(/\.md$/, '')}`;
}

/** The sidebar as VitePress takes it, titles read from the pages. */
export function sidebar(repoRoot: string): SidebarItem[] {
  return SIDEBAR_GROUPS.map((group) => ({
    text: group.text,
    items: group.pages.flatMap((entry): SidebarItem[] => {
      const pages = expand(entry, repoRoot);
      if (!entry.endsWith('/*')) return pages.map((p) => ({ text: p === 'README.md' ? 'Overview' : pageTitle(repoRoot, p), link: pageLink(p) }));
      return [{ text: 'Reference by route group', collapsed: false, items: pages.map((p) => ({ text: pageTitle(repoRoot, p), link: pageLink(p) })) }];
    }),
  }));
}
