// Part of `npm run docs:build`: every link between pages of the built site (docs/.vitepress/dist)
// leads to a file that is there, and every `#anchor` to an element of that page with that id.
// VitePress itself checks that a linked page exists, not its anchors.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SITE = fileURLToPath(new URL('../docs/.vitepress/dist/', import.meta.url));

/** The site's HTML files, relative to its root. */
function htmlFiles(dir = '') {
  return readdirSync(path.join(SITE, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return rel === 'assets' ? [] : htmlFiles(rel);
    return entry.name.endsWith('.html') ? [rel] : [];
  });
}

const idsCache = new Map();
function idsOf(file) {
  if (!idsCache.has(file)) idsCache.set(file, new Set([...readFileSync(path.join(SITE, file), 'utf8').matchAll(/\sid="([^"]+)"/g)].map((m) => m[1])));
  return idsCache.get(file);
}

const broken = [];
let checked = 0;
for (const file of htmlFiles()) {
  if (file === '404.html') continue;
  // The page's own content: VitePress's chrome (sidebar, nav) repeats the same links on every page.
  const html = readFileSync(path.join(SITE, file), 'utf8');
  const content = html.slice(html.indexOf('<main'), html.indexOf('</main>'));
  for (const [, href] of content.matchAll(/<a [^>]*href="([^"]+)"/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue;
    checked += 1;
    const [rawPath, anchor] = href.split('#', 2);
    let target = rawPath === '' ? file : rawPath.startsWith('/') ? rawPath.slice(1) : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(rawPath)));
    if (target === '' || target.endsWith('/')) target += 'index.html';
    const absolute = path.join(SITE, target);
    if (!existsSync(absolute) || statSync(absolute).isDirectory()) {
      broken.push(`${file}: ${href} (no ${target} in the site)`);
      continue;
    }
    if (anchor && !idsOf(target).has(decodeURIComponent(anchor))) broken.push(`${file}: ${href} (no id ${anchor} in ${target})`);
  }
}
if (broken.length > 0) {
  console.error(`docs site: ${broken.length} broken link(s) out of ${checked}:\n${broken.join('\n')}`);
  process.exit(1);
}
console.log(`docs site: ${checked} links between pages checked, none broken`);
