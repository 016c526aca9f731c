import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Files of the repository that the site's pages link to and that are not pages themselves
 * (`../deploy/prometheus.yml`): the site's build copies them to the same path in its output, so
 * a relative link works on the site as it does on GitHub. Paths are from the repository root;
 * links inside code, to other sites or to anchors only are not files.
 */
export function linkedRepoFiles(repoRoot: string, pages: readonly string[]): string[] {
  const files = new Set<string>();
  for (const page of pages) {
    let inFence = false;
    for (const line of readFileSync(path.join(repoRoot, page), 'utf8').split('\n')) {
      if (/^\s*(`{3,}|~{3,})/.test(line)) inFence = !inFence;
      if (inFence) continue;
      const prose = line.replace(/`[^`]*`/g, '');
      for (const match of prose.matchAll(/\]\(\s*<?([^)\s>#]+)[^)]*\)/g)) {
        const target = decodeURIComponent(match[1]!);
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.endsWith('.md')) continue;
        const file = path.posix.normalize(path.posix.join(path.posix.dirname(page), target));
        const absolute = path.join(repoRoot, file);
        if (!file.startsWith('../') && existsSync(absolute) && statSync(absolute).isFile()) files.add(file);
      }
    }
  }
  return [...files].sort();
}
