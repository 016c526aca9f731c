import { createEventTypeBody, decideEventValidation, needsCatalogLookup, needsSchemaCheck, schemaPatterns, type EventValidationSettings } from './event-catalog.js';

const issue = { path: '/amountCents', message: 'must be integer' };
const settings = (eventValidation: EventValidationSettings['eventValidation'], requireKnownEventTypes = false): EventValidationSettings => ({ eventValidation, requireKnownEventTypes });
const live = { deprecated: false, archived: false };

describe('decideEventValidation', () => {
  test('off: accepted whatever the issues; no catalog read needed', () => {
    expect(decideEventValidation({ type: 'invoice.paid', settings: settings('off'), definition: live, issues: [issue] })).toEqual({ kind: 'accept', warnings: [] });
    expect(needsCatalogLookup(settings('off'))).toBe(false);
    expect(needsCatalogLookup(settings('off', true))).toBe(true);
    expect(needsCatalogLookup(settings('warn'))).toBe(true);
  });

  test('warn: accepted with the issues as warnings', () => {
    expect(decideEventValidation({ type: 'invoice.paid', settings: settings('warn'), definition: live, issues: [issue] })).toEqual({ kind: 'accept', warnings: [issue] });
  });

  test('reject: 422 event_invalid naming each JSON pointer', () => {
    const d = decideEventValidation({ type: 'invoice.paid', settings: settings('reject'), definition: live, issues: [issue, { path: '', message: "must have required property 'currency'" }] });
    expect(d).toMatchObject({ kind: 'refuse', status: 422, code: 'event_invalid' });
    if (d.kind === 'refuse') {
      expect(d.message).toBe("data does not match the schema of invoice.paid: /amountCents must be integer; / must have required property 'currency'");
      expect(d.issues).toHaveLength(2);
    }
    expect(decideEventValidation({ type: 'invoice.paid', settings: settings('reject'), definition: live, issues: [] })).toEqual({ kind: 'accept', warnings: [] });
  });

  test('requireKnownEventTypes: unknown or archived → 422 event_type_unknown; deprecated → a warning', () => {
    expect(decideEventValidation({ type: 'x.y', settings: settings('off', true), definition: null, issues: [] })).toMatchObject({ kind: 'refuse', code: 'event_type_unknown' });
    expect(decideEventValidation({ type: 'x.y', settings: settings('warn', true), definition: { deprecated: false, archived: true }, issues: [] })).toMatchObject({ kind: 'refuse', code: 'event_type_unknown', message: expect.stringContaining('archived') });
    expect(decideEventValidation({ type: 'x.y', settings: settings('off'), definition: null, issues: [] })).toEqual({ kind: 'accept', warnings: [] });
    expect(decideEventValidation({ type: 'x.y', settings: settings('warn'), definition: { deprecated: true, archived: false }, issues: [] })).toEqual({ kind: 'accept', warnings: [{ path: '', message: 'x.y is deprecated' }] });
  });

  test('needsSchemaCheck: only a live entry with a real schema, validation on', () => {
    expect(needsSchemaCheck(settings('warn'), { schema: { type: 'object' }, archived: false })).toBe(true);
    expect(needsSchemaCheck(settings('off'), { schema: { type: 'object' }, archived: false })).toBe(false);
    expect(needsSchemaCheck(settings('warn'), { schema: null, archived: false })).toBe(false);
    expect(needsSchemaCheck(settings('warn'), { schema: true, archived: false })).toBe(false);
    expect(needsSchemaCheck(settings('warn'), { schema: { type: 'object' }, archived: true })).toBe(false);
    expect(needsSchemaCheck(settings('warn'), null)).toBe(false);
  });
});

describe('createEventTypeBody', () => {
  test('≤ 5 examples; unknown fields refused', () => {
    expect(createEventTypeBody.safeParse({ name: 'invoice.paid', description: 'Paid.', examples: [1, 2, 3, 4, 5] }).success).toBe(true);
    expect(createEventTypeBody.safeParse({ name: 'invoice.paid', description: 'Paid.', examples: [1, 2, 3, 4, 5, 6] }).error?.issues[0]?.message).toMatch(/at most 5/);
    expect(createEventTypeBody.safeParse({ name: 'invoice.paid', description: 'Paid.', colour: 1 }).success).toBe(false);
    expect(createEventTypeBody.safeParse({ name: 'bad name', description: 'x' }).success).toBe(false);
  });
});

test('schemaPatterns finds every pattern at any depth, in pattern and patternProperties, but not in data keywords', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'string', pattern: '^(a+)+$' }, pattern: { type: 'string', pattern: '^x$' } },
    patternProperties: { '^(x|x)*y$': { type: 'string' }, 'a/b': { type: 'string' } },
    items: [{ pattern: '(.*a){12}' }],
    const: { pattern: '(?=not-a-pattern)' },
    enum: [{ pattern: '(' }],
    examples: [{ pattern: '\\1' }],
    default: { pattern: '[' },
  };
  expect(schemaPatterns(schema)).toEqual([
    { path: '/properties/a/pattern', pattern: '^(a+)+$' },
    { path: '/properties/pattern/pattern', pattern: '^x$' },
    { path: '/patternProperties/^(x|x)*y$', pattern: '^(x|x)*y$' },
    { path: '/patternProperties/a~1b', pattern: 'a/b' },
    { path: '/items/0/pattern', pattern: '(.*a){12}' },
  ]);
  expect(schemaPatterns(true)).toEqual([]);
});
