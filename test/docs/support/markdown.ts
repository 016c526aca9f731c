import { readFileSync } from 'node:fs';
import path from 'node:path';
import { githubSlug } from '../../../docs/.vitepress/github-slug.js';
import { sitePages } from '../../../docs/.vitepress/sidebar.js';
import { REPO_ROOT } from '../../support/spawn-app.js';

/**
 * What a user reads: README.md and every page of docs/ and its folders (the generated API
 * reference in docs/api/ included), as paths relative to the repository root: the pages of the
 * documentation site.
 */
export function userDocs(): string[] {
  return sitePages(REPO_ROOT);
}

/** A document's text, by its path relative to the repository root. */
export function readDoc(file: string): string {
  return readFileSync(path.join(REPO_ROOT, file), 'utf8');
}

/** The document's lines outside fenced code blocks, with their 1-based line numbers. */
export function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker) {
      if (fence === null) fence = marker[0]!;
      else if (marker[0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text: line });
  });
  return out;
}

/**
 * GitHub's anchor for a heading (the documentation site makes the same, with {@link githubSlug}):
 * lower case, markup and punctuation dropped (letters, digits, `-` and `_` kept), each space a
 * `-`; a repeated slug gets `-1`, `-2`… in order.
 */
export function headingSlugs(text: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = githubSlug(m[1]!.replace(/<[^>]+>/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  return slugs;
}
