import { createRequire } from 'node:module';
import { buildOpenApiDocument, openApiPath } from '@postern/ingest';

const require = createRequire(import.meta.url);
// ajv is CommonJS; its 2020-12 build matches the document's `jsonSchemaDialect`.
const Ajv2020 = require('ajv/dist/2020') as new (opts: Record<string, unknown>) => {
  compile(schema: unknown): ((data: unknown) => boolean) & { errors?: unknown[] | null };
};

/** The outcome of checking one answer against the document. */
export interface SpecCheck {
  /** `METHOD /openapi/{path}`, or null when no documented route matches. */
  operation: string | null;
  /** The response key that matched (`200`, `404`, `4XX`), or null. */
  response: string | null;
  /** Why the answer does not fit the document; empty when it does. */
  problems: string[];
}

/**
 * Checks API answers against `/openapi.json` as ingest builds it: the status must be documented
 * for the operation (exactly or as `4XX`), and a JSON body must validate against that response's
 * schema (JSON Schema 2020-12, with ajv). Used by tests to show that the document describes
 * what the code answers.
 */
export function openApiValidator(doc: any = buildOpenApiDocument()) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const errorSchema = doc.components.schemas.Error;
  const resolve = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema).replaceAll('{"$ref":"#/components/schemas/Error"}', JSON.stringify(errorSchema)));
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  const templates = Object.keys(doc.paths).map((path) => ({ path, re: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));

  return {
    check(method: string, urlPath: string, status: number, body: unknown, contentType: string | null): SpecCheck {
      const path = urlPath.split('?')[0]!;
      const template = templates.find((t) => t.re.test(path) && doc.paths[t.path][method.toLowerCase()]);
      if (!template) return { operation: null, response: null, problems: [`${method} ${path} is not documented`] };
      const operation = `${method.toUpperCase()} ${template.path}`;
      const responses = doc.paths[template.path][method.toLowerCase()].responses;
      const key = String(status) in responses ? String(status) : `${String(status)[0]}XX` in responses ? `${String(status)[0]}XX` : null;
      if (!key) return { operation, response: null, problems: [`${operation}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`] };
      const content = responses[key].content as Record<string, { schema?: unknown }> | undefined;
      if (!content) return { operation, response: key, problems: body === undefined || body === '' ? [] : [`${operation} ${key}: documented without a body`] };
      if (!contentType?.startsWith('application/json')) {
        return { operation, response: key, problems: Object.keys(content).some((t) => contentType?.startsWith(t)) ? [] : [`${operation} ${key}: content type ${contentType} not documented`] };
      }
      const schema = content['application/json']?.schema;
      if (!schema) return { operation, response: key, problems: [`${operation} ${key}: JSON answer documented without a schema`] };
      const id = `${operation} ${key}`;
      let validate = validators.get(id);
      if (!validate) validators.set(id, (validate = ajv.compile(resolve(schema))));
      return { operation, response: key, problems: validate(body) ? [] : [`${id}: ${JSON.stringify(validate.errors)}`] };
    },
  };
}

/** The OpenAPI operation key of an express route, `GET /v1/endpoints/{id}`. */
export function operationKey(method: string, expressPath: string): string {
  return `${method.toUpperCase()} ${openApiPath(expressPath)}`;
}
