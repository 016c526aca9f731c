/** Keywords whose value is one subschema (JSON Schema 2020-12 and the older `definitions`). */
const ONE = ['not', 'if', 'then', 'else', 'items', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema', 'additionalItems'];
/** Keywords whose value is an array of subschemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
/** Keywords whose value maps names to subschemas. */
const MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'];
/** Keywords that apply their subschemas to the same value (not to a property or item of it). */
const IN_PLACE = new Set(['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas']);
/** The base URI of a schema without `$id`; never fetched. */
const DEFAULT_BASE = 'https://schema.postern.invalid/root.json';

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (segment: string) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
const isSchemaObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

interface Node {
  schema: Record<string, unknown>;
  /** JSON pointer of the schema resource (root or embedded `$id`) it belongs to. */
  resource: string;
  /** Pointers of the subschemas applied to the same value, with the keyword's path below this node. */
  inPlace: { at: string; child: string }[];
  refs: { at: string; ref: string }[];
}

/**
 * A `$ref` cycle of a JSON Schema (2020-12) that never moves into a property or an item: a
 * subschema that, through `$ref`/`$dynamicRef` and keywords applied to the same value (`allOf`,
 * `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`), reaches itself again. A
 * validator runs such a schema on one value forever (or its compiler never ends), so a catalog
 * refuses it; a reference that moves into the value first (`properties: {child: {$ref: "#"}}`)
 * is a recursive schema and fine. Resolves local references: `#`, `#/json/pointer`, `#anchor`
 * (`$anchor`, `$dynamicAnchor`) and `$id`s of the same document; others are left to the compiler.
 *
 * @returns `{at, through}`: `at` the JSON pointer of the `$ref` (or keyword) that closes the cycle,
 *   `through` the pointers of the subschemas on it; or null when there is none
 */
export function inPlaceSchemaCycle(schema: unknown): { at: string; through: string[] } | null {
  const nodes = new Map<string, Node>();
  const resourceById = new Map<string, string>();
  const anchors = new Map<string, string>();
  const baseOf = new Map<string, string>();

  // Every subschema by pointer, iteratively (a body is at most 128 levels deep anyway).
  const queue: { schema: unknown; pointer: string; resource: string; base: string }[] = [{ schema, pointer: '', resource: '', base: DEFAULT_BASE }];
  while (queue.length > 0) {
    const { schema: s, pointer, resource: parentResource, base: parentBase } = queue.pop()!;
    if (!isSchemaObject(s)) continue;
    let resource = parentResource;
    let base = parentBase;
    if (typeof s.$id === 'string') {
      try {
        base = new URL(s.$id, parentBase).href.replace(/#.*$/, '');
        resource = pointer;
        resourceById.set(base, pointer);
      } catch {
        // Not a URI: the compiler says so.
      }
    }
    if (pointer === '') resourceById.set(base, '');
    baseOf.set(pointer, base);
    for (const key of ['$anchor', '$dynamicAnchor']) if (typeof s[key] === 'string') anchors.set(`${resource}#${s[key] as string}`, pointer);
    const node: Node = { schema: s, resource, inPlace: [], refs: [] };
    nodes.set(pointer, node);
    const visit = (child: unknown, at: string, keyword: string) => {
      if (!isSchemaObject(child)) return;
      queue.push({ schema: child, pointer: pointer + at, resource, base });
      if (IN_PLACE.has(keyword)) node.inPlace.push({ at, child: pointer + at });
    };
    for (const k of ONE) visit(s[k], `/${k}`, k);
    for (const k of LIST) if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((c, i) => visit(c, `/${k}/${i}`, k));
    for (const k of MAP) if (isSchemaObject(s[k])) for (const [name, c] of Object.entries(s[k])) visit(c, `/${k}/${escape(name)}`, k);
    for (const k of ['$ref', '$dynamicRef']) if (typeof s[k] === 'string') node.refs.push({ at: `/${k}`, ref: s[k] as string });
  }

  const resolve = (from: string, ref: string): string | undefined => {
    let target: URL;
    try {
      target = new URL(ref, baseOf.get(from));
    } catch {
      return undefined;
    }
    const resource = resourceById.get(target.href.replace(/#.*$/, ''));
    if (resource === undefined) return undefined;
    const fragment = target.hash.replace(/^#/, '');
    if (fragment === '' || fragment.startsWith('/')) {
      const pointer = resource + (fragment === '' ? '' : fragment.split('/').slice(1).map((p) => `/${escape(unescape(p))}`).join(''));
      return nodes.has(pointer) ? pointer : undefined;
    }
    return anchors.get(`${resource}#${decodeURIComponent(fragment)}`);
  };
  const edges = (pointer: string): { at: string; child: string }[] => {
    const node = nodes.get(pointer)!;
    const out = [...node.inPlace];
    for (const { at, ref } of node.refs) {
      const child = resolve(pointer, ref);
      if (child !== undefined) out.push({ at, child });
    }
    return out;
  };

  // Depth-first search with colours, iteratively: grey = on the current path.
  const colour = new Map<string, 'grey' | 'black'>();
  for (const start of nodes.keys()) {
    if (colour.has(start)) continue;
    const path: { pointer: string; next: { at: string; child: string }[] }[] = [{ pointer: start, next: edges(start) }];
    colour.set(start, 'grey');
    while (path.length > 0) {
      const top = path[path.length - 1]!;
      const edge = top.next.shift();
      if (!edge) {
        colour.set(top.pointer, 'black');
        path.pop();
        continue;
      }
      const seen = colour.get(edge.child);
      if (seen === 'grey') {
        const from = path.findIndex((p) => p.pointer === edge.child);
        return { at: top.pointer + edge.at, through: path.slice(from).map((p) => p.pointer) };
      }
      if (seen === undefined) {
        colour.set(edge.child, 'grey');
        path.push({ pointer: edge.child, next: edges(edge.child) });
      }
    }
  }
  return null;
}
