import { inPlaceSchemaCycle } from './schema-refs.js';

test('a reference that moves into a property or an item first is recursion, not a cycle', () => {
  expect(inPlaceSchemaCycle({ type: 'object', properties: { child: { $ref: '#' } } })).toBeNull();
  expect(inPlaceSchemaCycle({ $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, items: { $ref: '#/$defs/node' } } }, $ref: '#/$defs/node' })).toBeNull();
  expect(inPlaceSchemaCycle({ $id: 'https://example.com/tree.json', anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: 'tree.json' } }] })).toBeNull();
  expect(inPlaceSchemaCycle({ $dynamicAnchor: 'node', properties: { c: { $dynamicRef: '#node' } } })).toBeNull();
  expect(inPlaceSchemaCycle(true)).toBeNull();
});

test('a reference back to itself on the same value is a cycle, named where it closes', () => {
  expect(inPlaceSchemaCycle({ $ref: '#' })).toEqual({ at: '/$ref', through: [''] });
  expect(inPlaceSchemaCycle({ allOf: [{ $ref: '#' }] })).toEqual({ at: '/allOf/0/$ref', through: ['', '/allOf/0'] });
  expect(inPlaceSchemaCycle({ $defs: { a: { $ref: '#/$defs/b' }, b: { not: { $ref: '#/$defs/a' } } }, $ref: '#/$defs/a' })).toEqual({ at: '/$defs/b/not/$ref', through: ['/$defs/a', '/$defs/b', '/$defs/b/not'] });
  expect(inPlaceSchemaCycle({ $defs: { x: { $anchor: 'x', if: { $ref: '#x' } } } })?.at).toBe('/$defs/x/if/$ref');
  expect(inPlaceSchemaCycle({ $id: 'https://example.com/a.json', properties: { p: { $id: 'b.json', oneOf: [{ $ref: 'b.json#' }] } } })?.at).toBe('/properties/p/oneOf/0/$ref');
  expect(inPlaceSchemaCycle({ $defs: { 'a/b': { $ref: '#/$defs/a~1b' } } })?.at).toBe('/$defs/a~1b/$ref');
});
