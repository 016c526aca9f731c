import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../support/spawn-app.js';
import { headingSlugs, proseLines, readDoc, userDocs } from './support/markdown.js';

/**
 * Every relative link in README.md and docs/*.md leads somewhere: the file (or folder) exists, and
 * an `#anchor` names a heading of the page it points at, slugged as GitHub does.
 */

/** `[text](target)` and `[text](target "title")`, outside code spans. */
function links(line: string): string[] {
  const withoutCode = line.replace(/`[^`]*`/g, '');
  return [...withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

test('the slugging follows GitHub: punctuation dropped, spaces to dashes, repeats numbered', () => {
  const slugs = headingSlugs('# HTTP API (v1)\n## TypeScript client: `@postern/client`\n## Org settings: event-type switches\n```\n# not a heading\n```\n## Ordering\n### Ordering\n');
  expect([...slugs]).toEqual(['http-api-v1', 'typescript-client-posternclient', 'org-settings-event-type-switches', 'ordering', 'ordering-1']);
});

test('every relative link and anchor in README.md and docs/*.md resolves', () => {
  const slugCache = new Map<string, Set<string>>();
  const slugsOf = (file: string) => {
    if (!slugCache.has(file)) slugCache.set(file, headingSlugs(readDoc(file)));
    return slugCache.get(file)!;
  };
  const broken: string[] = [];
  let checked = 0;
  for (const file of userDocs()) {
    for (const { line, text } of proseLines(readDoc(file))) {
      for (const target of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        checked += 1;
        const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
        const linked = rawPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(rawPath)));
        const absolute = path.join(REPO_ROOT, linked);
        if (!existsSync(absolute)) {
          broken.push(`${file}:${line}: ${target} (no ${linked})`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (!linked.endsWith('.md') || statSync(absolute).isDirectory()) {
          broken.push(`${file}:${line}: ${target} (an anchor into a file that is not Markdown)`);
          continue;
        }
        if (!slugsOf(linked).has(anchor)) broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${linked})`);
      }
    }
  }
  expect(checked).toBeGreaterThan(50);
  expect(broken).toEqual([]);
});
