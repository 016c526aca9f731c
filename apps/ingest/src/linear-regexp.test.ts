import { EventValidators } from './event-validation.js';
import { linearPatternProblem, linearRegExp } from './linear-regexp.js';

test('JavaScript spellings RE2 writes otherwise are translated: named groups, \\u escapes', () => {
  expect(linearRegExp('^(?<year>\\d{4})-\\d{2}$', 'u').test('2026-12')).toBe(true);
  expect(linearRegExp('^caf\\u00e9$', 'u').test('café')).toBe(true);
  expect(linearRegExp('^\\u{1F600}$', 'u').test('😀')).toBe(true);
  expect(linearRegExp('^\\p{L}+$', 'u').test('Ωmega')).toBe(true);
  // Unanchored, as JSON Schema's `pattern` is.
  expect(linearRegExp('b+', 'u').test('abba')).toBe(true);
});

test('what RE2 cannot run in linear time is a problem in plain words', () => {
  expect(linearPatternProblem('^[a-z0-9-]{1,64}$')).toBeNull();
  expect(linearPatternProblem('^(a*)*b$')).toBeNull();
  expect(linearPatternProblem('(a)\\1')).toMatch(/^invalid escape sequence: `\\1`; patterns run on a linear-time engine \(RE2 syntax\): no backreferences, lookahead or lookbehind/);
  for (const lookaround of ['(?=x)y', '(?!x)y', '(?<=a)b', '(?<!a)b']) expect(linearPatternProblem(lookaround)).toMatch(/^lookahead and lookbehind are not supported; /);
  expect(linearPatternProblem('((a{1000}){1000}){1000}')).toMatch(/repeat counts at most 1000 \(nested repeats multiplied together\)$/);
  expect(linearPatternProblem('a{1001}')).toMatch(/invalid repeat count/);
});

test('a schema validator checks backtracking-prone patterns on crafted input without backtracking', () => {
  // Natively (irregexp) the first takes over a minute on 60 a's, the second 2^60 steps on 60 x's:
  // with a backtracking engine this test would not end before jest's timeout. No clock is read
  // here (a busy machine would make any time bound a guess).
  const schema = { type: 'object', properties: { poly: { type: 'string', pattern: '^a*a*a*a*a*a*a*a*b$' } }, patternProperties: { '^(x+x+)+y$': { type: 'string' } } };
  const crafted = { poly: 'a'.repeat(60), ['x'.repeat(60)]: 1, ['x'.repeat(59) + 'y']: 2 };
  const issues = new EventValidators().check('org_1', { name: 't', version: 1, schema }, crafted);
  expect(issues).toEqual([
    { path: '/poly', message: 'must match pattern "^a*a*a*a*a*a*a*a*b$"' },
    { path: `/${'x'.repeat(59)}y`, message: 'must be string' },
  ]);
});

test('a $ref to another document is refused in plain words, without the base URI ingest gives the root', () => {
  const { compileError } = new EventValidators().checkDefinition({ type: 'object', properties: { a: { $ref: 'http://127.0.0.1:4400/s.json' } } }, []);
  expect(compileError).toBe('$ref http://127.0.0.1:4400/s.json cannot be resolved: only references inside the schema itself are followed (#, #/$defs/…), never other documents or URLs');
});
