import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { API_ROUTES, buildOpenApiDocument, openApiPath } from '@postern/ingest';
import { API_MARKDOWN_DIR, apiMarkdownPages } from '../../scripts/api-markdown.js';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * docs/api/*.md is what `npm run docs:api` generates from the OpenAPI document ingest serves, so
 * the Markdown reference cannot drift from the API: change a route, its schemas, description or
 * examples without regenerating, and this fails.
 */

const pages = apiMarkdownPages();
const dir = path.join(REPO_ROOT, API_MARKDOWN_DIR);

test('docs/api/ holds exactly the generated pages, each as generated (npm run docs:api)', () => {
  const onDisk = readdirSync(dir).filter((name) => name.endsWith('.md')).sort();
  expect(onDisk).toEqual([...pages.keys()].sort());
  for (const [name, text] of pages) {
    expect({ page: name, upToDate: readFileSync(path.join(dir, name), 'utf8') === text }).toEqual({ page: name, upToDate: true });
  }
});

test('every route of the document has a section, under its group, with its description', () => {
  const doc = buildOpenApiDocument() as any;
  for (const route of API_ROUTES) {
    const op = doc.paths[openApiPath(route.path)][route.method];
    const page = pages.get(`${route.tag.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.md`)!;
    expect({ route: `${route.method} ${route.path}`, listed: page.includes(`\`${route.method.toUpperCase()} ${openApiPath(route.path)}\` · auth:`) }).toEqual({ route: `${route.method} ${route.path}`, listed: true });
    // The description's first sentence, as the page shows it (`<` escaped for the site).
    const first = (op.description as string).split('\n')[0]!.slice(0, 60).replace(/</g, '&lt;');
    expect(page).toContain(first);
  }
});

test('the pages hold nothing the site would read as Vue: no {{ outside code blocks', () => {
  for (const [name, text] of pages) {
    const prose = text.replace(/```[\s\S]*?```/g, '');
    expect({ page: name, mustache: prose.includes('{{') }).toEqual({ page: name, mustache: false });
  }
});
