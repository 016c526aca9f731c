import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { EventTypeDefinition, SchemaIssue } from '@postern/shared';
import { linearRegExp } from './linear-regexp.js';

/** Most issues one event's check reports: enough to fix a payload, bounded for the answer's size. */
export const MAX_SCHEMA_ISSUES = 20;
/** Validators kept per ingest process (least recently used dropped first). */
export const DEFAULT_VALIDATOR_CACHE_SIZE = 1000;

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
const pointerSegment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * One ajv error as a JSON-pointer issue: a missing or extra property is named in the path itself
 * (`/customer/email`), so the path says where to look without reading the message.
 */
function issueOf(e: ErrorObject): SchemaIssue {
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  const named = e.keyword === 'required' ? params.missingProperty : e.keyword === 'additionalProperties' ? params.additionalProperty : undefined;
  if (named !== undefined) return { path: `${e.instancePath}/${pointerSegment(named)}`, message: e.keyword === 'required' ? 'is required' : 'is not allowed' };
  return { path: e.instancePath, message: e.message ?? `fails ${e.keyword}` };
}

/**
 * The JSON Schema 2020-12 dialect's compiler, set up for schemas that come from API callers.
 * ajv (CommonJS) is loaded on the first schema, synchronously: an ingest whose orgs define no
 * schemas never loads it.
 */
function newAjv(): Ajv2020 {
  const { Ajv2020 } = createRequire(import.meta.url)('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  // strict off: a schema's own annotations (`examples`, `x-…`) are not errors; formats are
  // annotations (no ajv-formats), as 2020-12 itself says by default. addUsedSchema off: two orgs'
  // schemas with the same `$id` never meet in ajv's registry. So no regular expression runs but
  // through linearRegExp: `format` runs none, `$data` (off) none either.
  return new Ajv2020({ allErrors: true, strict: false, validateFormats: false, addUsedSchema: false, logger: false, code: { regExp: linearRegExp } });
}

/**
 * The schema as ingest compiles it: a root without `$id` gets one (never fetched), so `$ref: "#"`
 * finds the root without the schema being added to ajv's registry (addUsedSchema off).
 */
function rooted(schema: Record<string, unknown> | boolean): Record<string, unknown> | boolean {
  return typeof schema === 'object' && schema.$id === undefined ? { $id: 'https://schema.postern.invalid/root.json', ...schema } : schema;
}

/**
 * ajv's compile error in the API's words: a `$ref` it cannot resolve names the reference without
 * the internal base URI ingest gives a schema's root (`can't resolve reference x from id
 * https://schema.postern.invalid/…`); other messages are kept.
 */
function plainCompileError(message: string): string {
  const unresolved = /^can't resolve reference (.+) from id .*$/.exec(message);
  if (unresolved) return `$ref ${unresolved[1]} cannot be resolved: only references inside the schema itself are followed (#, #/$defs/…), never other documents or URLs`;
  return message;
}

/** What a stack overflow inside ajv is reported as, instead of the engine's words. */
const TOO_RECURSIVE = 'recurses too deeply to check';

/** What {@link EventValidators.compileError} says about a schema that does not compile. */
export type SchemaProblem = string | null;

/**
 * The issues of `data` (empty = valid). A catalog refuses schemas that apply themselves to the same
 * value (`inPlaceSchemaCycle`) and bodies nest at most 128 levels, so recursion is bounded; should
 * the stack still run out, that is one issue at `''`, not an error with the engine's words.
 */
function runOn(validate: ValidateFunction, data: unknown): SchemaIssue[] {
  try {
    if (validate(data)) return [];
  } catch (err) {
    if (err instanceof RangeError) return [{ path: '', message: `could not be checked: the schema ${TOO_RECURSIVE}` }];
    throw err;
  }
  return (validate.errors ?? []).slice(0, MAX_SCHEMA_ISSUES).map(issueOf);
}

/**
 * Ingest's validators of event `data`, compiled once per event type version and cached (LRU, per
 * process): the first event of a type after a change compiles its schema, every later one reuses it.
 */
export class EventValidators {
  private ajvInstance: Ajv2020 | null = null;
  private readonly cache = new Map<string, ValidateFunction>();
  /** Compilations so far (for tests and the bench: a cached validator compiles nothing). */
  compiled = 0;

  constructor(private readonly maxEntries = DEFAULT_VALIDATOR_CACHE_SIZE) {}

  /**
   * Checks a definition about to be stored, caching nothing (a change that loses a race must not
   * leave its validator under the version another change took): why the schema does not compile
   * under 2020-12 (ajv's words), or each example's issues (empty lists: all valid).
   */
  checkDefinition(schema: Record<string, unknown> | boolean, examples: readonly unknown[]): { compileError: SchemaProblem; exampleIssues: SchemaIssue[][] } {
    let validate: ValidateFunction;
    try {
      validate = newAjv().compile(rooted(schema));
    } catch (err) {
      return { compileError: err instanceof RangeError ? `its $ref chain ${TOO_RECURSIVE}` : err instanceof Error ? plainCompileError(err.message) : 'does not compile', exampleIssues: [] };
    }
    return { compileError: null, exampleIssues: examples.map((e) => runOn(validate, e)) };
  }

  /** The issues of `data` against the type's schema (empty = valid), at most {@link MAX_SCHEMA_ISSUES}. */
  check(orgId: string, definition: Pick<EventTypeDefinition, 'name' | 'version' | 'schema'>, data: unknown): SchemaIssue[] {
    if (definition.schema === null || definition.schema === true) return [];
    const validate = this.validator(orgId, definition as { name: string; version: number; schema: Record<string, unknown> | boolean });
    return runOn(validate, data);
  }

  private validator(orgId: string, d: { name: string; version: number; schema: Record<string, unknown> | boolean }): ValidateFunction {
    const key = `${orgId}\0${d.name}\0${d.version}`;
    const hit = this.cache.get(key);
    if (hit) {
      // Map order is insertion order: re-inserting marks it most recently used.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    this.ajvInstance ??= newAjv();
    const compiled = this.ajvInstance.compile(rooted(d.schema));
    this.compiled += 1;
    this.cache.set(key, compiled);
    if (this.cache.size > this.maxEntries) {
      const [oldKey, old] = this.cache.entries().next().value as [string, ValidateFunction];
      this.cache.delete(oldKey);
      // ajv keeps every compiled schema too (keyed by the object): let that one go as well.
      this.ajvInstance.removeSchema(old.schema as object);
    }
    return compiled;
  }
}
