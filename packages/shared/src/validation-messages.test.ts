import { z } from 'zod';
import { issuePath, plainIssue, type InputSource } from './validation-messages.js';

/** The first issue of parsing `value` with `schema`, in plain words, as `path: message`. */
function first(schema: z.ZodType, value: unknown, source: InputSource = 'body'): string {
  const r = schema.safeParse(value);
  if (r.success) throw new Error('expected a failure');
  const { path, message } = plainIssue(r.error.issues[0]!, source);
  return `${issuePath(path) || source}: ${message}`;
}

/** zod's own English wording; none of it may survive. */
const RAW = /Invalid|Too (big|small)|Unrecognized|received|[Ee]xpected/;

test('a message the schema wrote itself is kept', () => {
  expect(first(z.strictObject({ url: z.string({ error: 'url must be a string' }) }), { url: 1 })).toBe('url: url must be a string');
});

test.each([
  [z.strictObject({ url: z.string() }), {}, 'url: url is required (a string)'],
  [z.strictObject({ n: z.number() }), { n: 'x' }, 'n: n must be a number, not a string'],
  [z.strictObject({ n: z.number().int() }), { n: 1.5 }, 'n: n must be an integer, not a number'],
  [z.strictObject({ on: z.boolean() }), { on: null }, 'on: on must be true or false, not null'],
  [z.strictObject({ list: z.array(z.string()) }), { list: {} }, 'list: list must be an array, not an object'],
  [z.strictObject({ list: z.array(z.string()) }), { list: ['a', 2] }, 'list.1: each entry of list must be a string, not a number'],
  [z.strictObject({ mode: z.enum(['a', 'b', 'c']) }), { mode: 'd' }, 'mode: mode must be one of "a", "b" or "c"'],
  [z.strictObject({ kind: z.literal('x') }), { kind: 'y' }, 'kind: kind must be "x"'],
  [z.strictObject({ name: z.string().min(1) }), { name: '' }, 'name: name must not be empty'],
  [z.strictObject({ name: z.string().max(3) }), { name: 'abcd' }, 'name: name must be at most 3 characters'],
  [z.strictObject({ list: z.array(z.string()).min(1) }), { list: [] }, 'list: list must hold at least one entry'],
  [z.strictObject({ list: z.array(z.string()).max(2) }), { list: ['a', 'b', 'c'] }, 'list: list must hold at most 2 entries'],
  [z.strictObject({ n: z.number().min(1) }), { n: 0 }, 'n: n must be at least 1'],
  [z.strictObject({ n: z.number().lt(5) }), { n: 5 }, 'n: n must be less than 5'],
  [z.strictObject({ n: z.number().multipleOf(5) }), { n: 7 }, 'n: n must be a multiple of 5'],
  [z.strictObject({ at: z.iso.datetime() }), { at: 'noon' }, 'at: at must be an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z'],
  [z.strictObject({ id: z.string().startsWith('ep_') }), { id: 'x' }, 'id: id must start with "ep_"'],
  [z.strictObject({ id: z.string().regex(/^a/) }), { id: 'b' }, 'id: id is not in a form this field accepts'],
  [z.strictObject({ x: z.string().refine(() => false) }), { x: 'b' }, 'x: x is not accepted'],
  [z.strictObject({ a: z.string() }), { a: 'x', colour: 1 }, 'body: unknown field "colour"'],
  [z.strictObject({ inner: z.strictObject({ a: z.string() }) }), { inner: { a: 'x', b: 1 } }, 'inner: unknown field "b"'],
])('zod wording is rewritten: %#', (schema, value, expected) => {
  const said = first(schema, value);
  expect(said).toBe(expected);
  expect(said).not.toMatch(RAW);
});

test('in a query string, an unknown key is a parameter, and a list where one value is taken means it was given twice', () => {
  const query = z.strictObject({ endpointId: z.string().optional() });
  expect(first(query, { colour: 'red' }, 'query')).toBe('query: unknown parameter "colour"');
  expect(first(query, { endpointId: ['ep_a', 'ep_b'] }, 'query')).toBe('endpointId: endpointId must be given once');
});

test('a union names the problem of the option the input came closest to', () => {
  const body = z.union([z.strictObject({ code: z.string(), eventType: z.string() }), z.strictObject({ code: z.string(), eventId: z.string() })]);
  expect(first(body, { code: 'x', eventId: 5 })).toBe('eventId: eventId must be a string, not a number');
  expect(first(z.strictObject({ v: z.union([z.string(), z.number()]) }), { v: null })).toBe('v: v must be a string or a number');
  expect(first(z.strictObject({ v: z.union([z.string(), z.number()]) }), {})).toBe('v: v is required (a string or a number)');
});

test('a discriminated union with an unknown discriminator lists the ones it takes', () => {
  const auth = z.strictObject({ auth: z.discriminatedUnion('type', [z.strictObject({ type: z.literal('basic') }), z.strictObject({ type: z.literal('bearer') })]) });
  const said = first(auth, { auth: { type: 'digest' } });
  expect(said).toBe('auth.type: type must be one of "basic" or "bearer"');
  expect(said).not.toMatch(RAW);
});
