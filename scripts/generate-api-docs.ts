/**
 * Writes docs/api/*.md: the HTTP API reference in Markdown, one page per route group, generated
 * from the OpenAPI document ingest serves (`buildOpenApiDocument`). Run after changing a route,
 * its schemas, its description or its examples: `npm run docs:api`; a test fails while the pages
 * are out of date. Pages of groups that no longer exist are removed.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_MARKDOWN_DIR, apiMarkdownPages } from './api-markdown.js';

const dir = path.join(fileURLToPath(new URL('..', import.meta.url)), API_MARKDOWN_DIR);
const pages = apiMarkdownPages();
mkdirSync(dir, { recursive: true });
for (const name of readdirSync(dir)) {
  if (name.endsWith('.md') && !pages.has(name)) rmSync(path.join(dir, name));
}
for (const [name, text] of pages) writeFileSync(path.join(dir, name), text);
console.log(`wrote ${pages.size} pages to ${API_MARKDOWN_DIR}/`);
