import { buildOpenApiDocument } from '@postern/ingest';
import { githubSlug } from '../docs/.vitepress/github-slug.js';

type Schema = Record<string, any>;

/** Where the generated pages go, from the repository root. */
export const API_MARKDOWN_DIR = 'docs/api';

/** The note at the top of every generated page. */
const GENERATED_NOTE =
  '<!-- Generated from /openapi.json by `npm run docs:api`: change apps/ingest/src/openapi.ts or apps/ingest/src/route-docs/, then run it again. -->';

/** A page's file name for a tag: `platform keys` → `platform-keys.md`. */
export function tagFile(tag: string): string {
  return `${tag.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.md`;
}

/** A tag as a page title: `api keys` → `API keys`. */
function tagTitle(tag: string): string {
  const title = tag.replace(/\bapi\b/g, 'API');
  return title.charAt(0).toUpperCase() + title.slice(1);
}

/** Text for a table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/**
 * Prose as the site's Markdown renderer takes it: `<` outside code spans becomes `&lt;`, so a
 * `<placeholder>` is shown rather than read as an HTML tag (which the site's build refuses).
 */
function prose(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;')))
    .join('');
}

/** A JSON Schema's type, short: `string`, `"a" \| "b"`, `integer[]`, `string or null`. */
function typeOf(schema: Schema | undefined): string {
  if (!schema || Object.keys(schema).length === 0) return 'any';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' or ');
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return [...new Set(union.map((s: Schema) => typeOf(s)))].join(' or ');
  if (Array.isArray(schema.type)) return schema.type.map((t: string) => typeOf({ ...schema, type: t })).join(' or ');
  if (schema.type === 'array') {
    // `("*" or string)[]`, not `"*" or string[]`, which reads as a lone "*" or an array.
    const item = typeOf(schema.items);
    return item.includes(' or ') ? `(${item})[]` : `${item}[]`;
  }
  return String(schema.type ?? 'any');
}

/** Rows of a table of named things: name, type, whether required, and a description where any has one. */
function nameTable(heading: string, rows: { name: string; schema: Schema | undefined; required: boolean; description?: string }[]): string[] {
  if (rows.length === 0) return [];
  const described = rows.some((r) => (r.description ?? '') !== '');
  const lines = described ? [`| ${heading} | type | required | description |`, '|---|---|---|---|'] : [`| ${heading} | type | required |`, '|---|---|---|'];
  for (const r of rows) {
    const base = `| \`${r.name}\` | ${cell(`\`${typeOf(r.schema)}\``)} | ${r.required ? 'yes' : 'no'} |`;
    lines.push(described ? `${base} ${cell(prose(r.description ?? ''))} |` : base);
  }
  return lines;
}

/** The fields of an object schema as a {@link nameTable}. */
function fieldTable(schema: Schema): string[] {
  const required = new Set<string>(schema.required ?? []);
  return nameTable('field', Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([name, property]) => ({ name, schema: property, required: required.has(name), description: property.description })));
}

/** Line width past which {@link json} breaks an object or array over lines. */
const JSON_WIDTH = 100;

/**
 * JSON as people read it: an object or array on one line when it fits in {@link JSON_WIDTH}
 * (counting `lead`, the characters before it on its line), else one member a line.
 */
function json(value: unknown, indent = '', lead = 0): string {
  const flat = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(flat).join(', ')}]`;
    if (v !== null && typeof v === 'object') {
      const members = Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${flat(x)}`);
      return members.length === 0 ? '{}' : `{ ${members.join(', ')} }`;
    }
    return JSON.stringify(v);
  };
  const one = flat(value);
  if (value === null || typeof value !== 'object' || indent.length + lead + one.length <= JSON_WIDTH) return one;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((x) => `${inner}${json(x, inner)}`).join(',\n')}\n${indent}]`;
  const members = Object.entries(value).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${json(x, inner, JSON.stringify(k).length + 2)}`);
  return `{\n${members.join(',\n')}\n${indent}}`;
}

/** An example as a fenced block: JSON laid out by {@link json}, text as it is. */
function exampleBlock(example: unknown, contentType: string): string[] {
  if (typeof example === 'string' && contentType !== 'application/json') {
    const language = contentType === 'text/html' ? 'html' : 'text';
    return [`\`\`\`${language}`, example.replace(/\n+$/, ''), '```'];
  }
  return ['```json', json(example), '```'];
}

/** Who may call an operation, from its `security` (the scope it needs is in its description). */
function authLine(op: Schema): string {
  const schemes = new Set((op.security as Record<string, unknown>[]).flatMap((s) => Object.keys(s)));
  if (schemes.has('apiKey')) return 'an API key, or a platform key with `Postern-Org`';
  if (schemes.has('adminBasic')) return 'the admin token (Bearer, or HTTP Basic with the token as the password)';
  if (schemes.has('adminToken')) return 'the admin token';
  return 'none';
}

/** One operation as a section of its tag's page. */
function operationSection(method: string, path: string, op: Schema, heading: string): string[] {
  const out = [`## ${prose(heading)}`, '', `\`${method.toUpperCase()} ${path}\` · auth: ${authLine(op)}`, ''];
  if (op.description) out.push(prose(op.description), '');

  const parameters = (op.parameters ?? []) as Schema[];
  for (const [where, title] of [
    ['path', 'Path parameters'],
    ['query', 'Query parameters'],
    ['header', 'Headers'],
  ] as const) {
    const params = parameters.filter((p) => p.in === where);
    if (params.length === 0) continue;
    out.push(`**${title}**`, '', ...nameTable('name', params.map((p) => ({ name: p.name, schema: p.schema, required: p.required === true, description: p.description ?? p.schema?.description }))), '');
  }

  const body = op.requestBody?.content?.['application/json'] as Schema | undefined;
  if (body) {
    out.push(`**Request body** (JSON${op.requestBody.required ? '' : ', optional'})`, '');
    const fields = fieldTable(body.schema as Schema);
    if (fields.length > 0) out.push(...fields, '');
    else if (body.schema.anyOf) {
      out.push(`One of: ${body.schema.anyOf.map((s: Schema) => Object.keys(s.properties ?? {}).map((k) => `\`${k}\``).join(', ')).map((f: string) => `{${f}}`).join(' or ')}.`, '');
    }
    if (body.example !== undefined) out.push('Example:', '', ...exampleBlock(body.example, 'application/json'), '');
  }

  out.push('**Responses**', '', '| status | what |', '|---|---|');
  const responses = Object.entries(op.responses as Record<string, Schema>);
  for (const [status, response] of responses) out.push(`| ${status} | ${cell(prose(response.description ?? ''))} |`);
  out.push('');
  for (const [status, response] of responses) {
    if (!status.startsWith('2')) continue;
    for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Schema>)) {
      if (media.example === undefined) continue;
      out.push(`Example ${status} (\`${type}\`):`, '', ...exampleBlock(media.example, type), '');
    }
  }
  return out;
}

/**
 * The Markdown reference, one page per route group (tag) of the OpenAPI document ingest serves:
 * file name (in {@link API_MARKDOWN_DIR}) → text. Every page lists its routes, then gives each
 * its method and path, who may call it, its description, parameters, request body (fields and an
 * example), responses with their error codes, and an example of each 2xx answer. Headings are the
 * operations' summaries, anchored as GitHub and the documentation site anchor them.
 */
export function apiMarkdownPages(doc: Schema = buildOpenApiDocument()): Map<string, string> {
  const pages = new Map<string, string>();
  for (const tag of doc.tags as { name: string; description: string }[]) {
    const operations = Object.entries(doc.paths as Record<string, Record<string, Schema>>).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => (op.tags as string[]).includes(tag.name))
        .map(([method, op]) => ({ method, path, op })),
    );
    if (operations.length === 0) continue;
    // Headings and their anchors, numbered where a summary repeats, as the renderers number them.
    const seen = new Map<string, number>();
    const anchored = operations.map((o) => {
      const base = githubSlug(o.op.summary as string);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return { ...o, anchor: n === 0 ? base : `${base}-${n}` };
    });
    const lines = [
      `# ${tagTitle(tag.name)}`,
      '',
      GENERATED_NOTE,
      '',
      prose(tag.description),
      '',
      'Part of the [HTTP API](../api.md) reference (credentials, scopes, idempotency and errors are described there). A running ingest serves the same reference as a web page at `/docs/api`.',
      '',
      '| route | what |',
      '|---|---|',
      ...anchored.map((o) => `| [\`${o.method.toUpperCase()} ${o.path}\`](#${o.anchor}) | ${cell(prose(o.op.summary))} |`),
      '',
    ];
    for (const o of anchored) lines.push(...operationSection(o.method, o.path, o.op, o.op.summary));
    pages.set(tagFile(tag.name), `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`);
  }
  return pages;
}
