import { Parser, DiagnosticSeverity } from '@asyncapi/parser';
import { TEST_ADMIN_TOKEN, fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';

/**
 * The event catalog: per-org event types with JSON Schemas and examples; the org's validation mode
 * (off, warn, reject) applied to new events with a bad payload each; unknown types refused when the
 * org asks; the catalog as an AsyncAPI 3.0 document the AsyncAPI parser accepts; a type's example
 * sent to one endpoint as a test event.
 */

let postern: TestPostern;
let org: { id: string; apiKey: string };
let other: { id: string; apiKey: string };
let receiver: TestReceiver;

const invoicePaid = {
  name: 'invoice.paid',
  description: 'An invoice was paid in full.',
  group: 'billing',
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    required: ['invoiceId', 'amountCents', 'currency'],
    properties: { invoiceId: { type: 'string' }, amountCents: { type: 'integer', minimum: 0 }, currency: { type: 'string', enum: ['EUR', 'USD'] }, lines: { type: 'array', prefixItems: [{ type: 'string' }] } },
    additionalProperties: false,
  },
  examples: [{ invoiceId: 'in_1042', amountCents: 4200, currency: 'EUR' }],
};
const bad = { invoiceId: 42, amountCents: 1.5, currency: 'EUR', colour: 'red' };

const api = (method: string, path: string, body?: unknown, key = org.apiKey) => postern.api(method, path, { key, body });
const setValidation = (eventValidation: string, requireKnownEventTypes = false) => api('PATCH', '/v1/org', { eventValidation, requireKnownEventTypes });

beforeAll(async () => {
  postern = await startPostern();
  org = await postern.createOrg('catalog');
  other = await postern.createOrg('other');
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await postern?.close();
});

describe('the catalog', () => {
  test('create, read, list, change (version +1), delete; another org sees none of it', async () => {
    const created = await api('POST', '/v1/event-types', invoicePaid);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'invoice.paid', group: 'billing', version: 1, deprecated: false, archived: false, examples: invoicePaid.examples });
    expect((await api('POST', '/v1/event-types', invoicePaid)).body.error.code).toBe('event_type_exists');
    await api('POST', '/v1/event-types', { name: 'invoice.voided', description: 'Voided.', archived: true });
    expect((await api('GET', '/v1/event-types')).body.data.map((t: { name: string }) => t.name)).toEqual(['invoice.paid']);
    expect((await api('GET', '/v1/event-types?includeArchived=true')).body.data.map((t: { name: string }) => t.name)).toEqual(['invoice.paid', 'invoice.voided']);
    const changed = await api('PATCH', '/v1/event-types/invoice.voided', { group: 'billing', archived: false, deprecated: true });
    expect(changed.body).toMatchObject({ version: 2, group: 'billing', archived: false, deprecated: true });
    expect((await api('GET', '/v1/event-types/invoice.voided')).body.version).toBe(2);
    expect((await api('GET', '/v1/event-types/invoice.voided', undefined, other.apiKey)).status).toBe(404);
    expect((await api('GET', '/v1/event-types', undefined, other.apiKey)).body.data).toEqual([]);
    expect((await api('DELETE', '/v1/event-types/invoice.voided')).status).toBe(204);
    expect((await api('DELETE', '/v1/event-types/invoice.voided')).status).toBe(404);
    // Through the typed client too.
    const client = postern.client(org.apiKey);
    expect((await client.eventTypes.get('invoice.paid')).schema).toEqual(invoicePaid.schema);
    expect((await client.eventTypes.list()).map((t) => t.name)).toEqual(['invoice.paid']);
  });

  test.each([
    [{ name: 'x.y', description: 'x', schema: { type: 'nope' } }, 400, 'invalid_schema', /^schema: not a valid JSON Schema \(2020-12\)/],
    [{ name: 'x.y', description: 'x', schema: { type: 'object', required: ['a'] }, examples: [{ a: 1 }, {}] }, 400, 'invalid_request', /^examples\.1: does not match the schema: \/a is required/],
    [{ name: 'x.y', description: 'x', examples: [1, 2, 3, 4, 5, 6] }, 400, 'invalid_request', /^examples: .*at most 5/],
    [{ name: 'x.y', description: '' }, 400, 'invalid_request', /^description: /],
    [{ name: 'bad name', description: 'x' }, 400, 'invalid_request', /^name: /],
    [{ name: 'asyncapi.json', description: 'x' }, 400, 'invalid_request', /reserved/],
    [{ name: 'endpoint.disabled', description: 'x' }, 400, 'invalid_request', /^name: endpoint\.disabled is reserved for Postern's own operational webhooks/],
    [{ name: 'endpoint.paused', description: 'x' }, 400, 'invalid_request', /^name: endpoint\.paused is reserved/],
    [{ name: 'webhook.test', description: 'x' }, 400, 'invalid_request', /^name: webhook\.test is reserved for test events/],
    [{ name: 'x.y', description: 'x', colour: 1 }, 400, 'invalid_request', /unknown field "colour"/],
  ])('%j → %i %s', async (body, status, code, message) => {
    const r = await api('POST', '/v1/event-types', body);
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status, code });
    expect(r.body.error.message).toMatch(message);
  });

  test('a portal session reads the catalog but cannot change it without webhooks:write', async () => {
    const session = await postern.api('POST', `/v1/orgs/${org.id}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: {} });
    expect((await api('GET', '/v1/event-types', undefined, session.body.token)).status).toBe(200);
    expect((await api('POST', '/v1/event-types', { name: 'a.b', description: 'x' }, session.body.token)).body.error.code).toBe('insufficient_scope');
  });
});

describe('validation of new events', () => {
  const send = (type: string, data: unknown) => api('POST', '/v1/events', { type, data });

  afterAll(async () => {
    await setValidation('off', false);
  });

  test('off (default): a bad payload is accepted, no warnings', async () => {
    expect((await api('GET', '/v1/org')).body).toMatchObject({ eventValidation: 'off', requireKnownEventTypes: false });
    const r = await send('invoice.paid', bad);
    expect(r.status).toBe(202);
    expect(r.body.warnings).toBeUndefined();
  });

  test('warn: accepted, with a warning per JSON pointer', async () => {
    await setValidation('warn');
    const r = await send('invoice.paid', bad);
    expect(r.status).toBe(202);
    expect(r.body.warnings).toEqual(
      expect.arrayContaining([
        { path: '/invoiceId', message: 'must be string' },
        { path: '/amountCents', message: 'must be integer' },
        { path: '/colour', message: 'is not allowed' },
      ]),
    );
    expect((await send('invoice.paid', invoicePaid.examples[0])).body.warnings).toBeUndefined();
    // The event was stored and fanned out like any other.
    expect((await api('GET', `/v1/events/${r.body.id}`)).status).toBe(200);
  });

  test('reject: 422 event_invalid naming the paths; nothing stored; a good payload passes', async () => {
    await setValidation('reject');
    const r = await send('invoice.paid', { ...bad, currency: 'GBP' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('event_invalid');
    expect(r.body.error.message).toMatch(/^data does not match the schema of invoice\.paid: /);
    expect(r.body.error.details).toEqual(expect.arrayContaining([{ path: '/currency', message: 'must be equal to one of the allowed values' }, { path: '/colour', message: 'is not allowed' }]));
    const missing = await send('invoice.paid', { invoiceId: 'in_1' });
    expect(missing.body.error.details).toEqual(expect.arrayContaining([{ path: '/amountCents', message: 'is required' }, { path: '/currency', message: 'is required' }]));
    const events = await api('GET', '/v1/events?type=invoice.paid');
    // Off: one, warn: two; none of the refused ones.
    expect(events.body.data.length).toBe(3);
    expect((await send('invoice.paid', invoicePaid.examples[0])).status).toBe(202);
    // A type without a catalog entry is not checked unless the org asks for known types only.
    expect((await send('user.created', { anything: true })).status).toBe(202);
  });

  test('a changed schema is used from the next event on (validators cached per version)', async () => {
    await setValidation('reject');
    await api('PATCH', '/v1/event-types/invoice.paid', { schema: { type: 'object', required: ['invoiceId'] } });
    expect((await send('invoice.paid', { invoiceId: 'in_2', extra: 1 })).status).toBe(202);
    expect((await send('invoice.paid', { other: 1 })).body.error.details).toEqual([{ path: '/invoiceId', message: 'is required' }]);
    await api('PATCH', '/v1/event-types/invoice.paid', { schema: invoicePaid.schema });
    expect((await send('invoice.paid', { invoiceId: 'in_2', extra: 1 })).status).toBe(422);
  });

  test('requireKnownEventTypes: an unknown or archived type is 422 event_type_unknown', async () => {
    await setValidation('off', true);
    const r = await send('user.created', {});
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 422, code: 'event_type_unknown' });
    await api('POST', '/v1/event-types', { name: 'user.deleted', description: 'A user was deleted.', archived: true });
    expect((await send('user.deleted', {})).body.error.code).toBe('event_type_unknown');
    // Off means off: a bad payload of a known type still passes.
    expect((await send('invoice.paid', bad)).status).toBe(202);
  });

  test.each([[{ eventValidation: 'strict' }, /^eventValidation: .*must be off, warn or reject/], [{ requireKnownEventTypes: 'yes' }, /^requireKnownEventTypes: /]])('PATCH /v1/org %j → 400', async (body, message) => {
    const r = await api('PATCH', '/v1/org', body);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(message);
  });
});

describe('AsyncAPI 3.0', () => {
  test('the document of the catalog validates with @asyncapi/parser, one message per live type', async () => {
    await api('POST', '/v1/event-types', { name: 'user.created', description: 'A user signed up.', group: 'users', schema: { type: 'object', properties: { userId: { type: 'string' } } }, examples: [{ userId: 'u_1' }] });
    const r = await api('GET', '/v1/event-types/asyncapi.json');
    expect(r.status).toBe(200);
    expect(r.body.asyncapi).toBe('3.0.0');
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(r.body));
    const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
    expect(errors).toEqual([]);
    expect(document).toBeDefined();
    const names = document!.allMessages().all().map((m) => m.name());
    expect(names.sort()).toEqual(['invoice.paid', 'user.created']);
    const paid = document!.allMessages().all().find((m) => m.name() === 'invoice.paid')!;
    expect(paid.payload()?.properties()?.data?.required()).toEqual(['invoiceId', 'amountCents', 'currency']);
    expect(paid.examples().all()[0]?.payload()).toMatchObject({ type: 'invoice.paid', data: invoicePaid.examples[0] });
    // Another org's document lists nothing of this one.
    const theirs = await api('GET', '/v1/event-types/asyncapi.json', undefined, other.apiKey);
    expect(Object.keys(theirs.body.components.messages)).toEqual([]);
  });
});

describe('send an example', () => {
  test("delivers the type's example to that endpoint only, as a test event of that type", async () => {
    const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, eventTypes: ['invoice.paid'], policy: fastPolicy(2) });
    const sent = await api('POST', `/v1/endpoints/${endpoint.id}/send-example`, { eventType: 'invoice.paid' });
    expect(sent.status).toBe(202);
    expect(sent.body.deliveries).toEqual([{ id: expect.stringMatching(/^dlv_/), endpointId: endpoint.id }]);
    const [request] = await receiver.waitForRequests(1);
    expect(JSON.parse(request!.body)).toMatchObject({ type: 'invoice.paid', data: invoicePaid.examples[0] });
    const delivery = await api('GET', `/v1/deliveries/${sent.body.deliveries[0].id}`);
    expect(delivery.body.isTest).toBe(true);
    expect((await api('POST', `/v1/endpoints/${endpoint.id}/send-example`, { eventType: 'invoice.paid', example: 3 })).body.error.code).toBe('no_example');
    expect((await api('POST', `/v1/endpoints/${endpoint.id}/send-example`, { eventType: 'nope.none' })).status).toBe(404);
  });
});

test('patterns run in linear time: a backtracking-prone schema is stored and a crafted event is checked at once; a pattern RE2 cannot run is refused, naming it', async () => {
  const redos = await postern.createOrg('redos');
  const call = (method: string, path: string, body?: unknown) => postern.api(method, path, { key: redos.apiKey, body });
  expect((await call('PATCH', '/v1/org', { eventValidation: 'reject' })).status).toBe(200);
  const schema = {
    type: 'object',
    properties: { nested: { type: 'string', pattern: '^(a*)*b$' }, poly: { type: 'string', pattern: '^a*a*a*a*a*a*a*a*b$' } },
    patternProperties: { '^(x+x+)+y$': { type: 'string' } },
  };
  expect((await call('POST', '/v1/event-types', { name: 'redos.probe', description: 'd', schema })).status).toBe(201);
  // With a backtracking engine `poly` alone takes over a minute on 60 a's, the key 2^60 steps: the
  // request would not be answered before the test's timeout (no clock bound of its own).
  const crafted = 'a'.repeat(60);
  const r = await call('POST', '/v1/events', { type: 'redos.probe', data: { nested: crafted, poly: crafted, ['x'.repeat(60)]: 1 } });
  expect(r.status).toBe(422);
  expect(r.body.error.details).toEqual([
    { path: '/nested', message: 'must match pattern "^(a*)*b$"' },
    { path: '/poly', message: 'must match pattern "^a*a*a*a*a*a*a*a*b$"' },
  ]);
  expect((await call('POST', '/v1/events', { type: 'redos.probe', data: { nested: 'aab', poly: 'ab', ['x'.repeat(9) + 'y']: 'z' } })).status).toBe(202);

  for (const [body, field] of [
    [{ type: 'string', pattern: '^(a)\\1$' }, 'schema.pattern'],
    [{ type: 'object', properties: { v: { type: 'string', pattern: '^(?=x)x' } } }, 'schema.properties.v.pattern'],
    [{ type: 'object', patternProperties: { '(?<!x)y': true } }, 'schema.patternProperties.(?<!x)y'],
  ] as const) {
    const refused = await call('POST', '/v1/event-types', { name: 'redos.refused', description: 'd', schema: body });
    expect([field, refused.status, refused.body.error.code]).toEqual([field, 400, 'invalid_schema']);
    expect(refused.body.error.message).toMatch(new RegExp(`^${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the pattern .* is not supported: .*linear-time engine`));
  }
  const patched = await call('PATCH', '/v1/event-types/redos.probe', { schema: { type: 'string', pattern: '(a)\\1' } });
  expect([patched.status, patched.body.error.code]).toEqual([400, 'invalid_schema']);
  expect((await call('GET', '/v1/event-types/redos.probe')).body.version).toBe(1);
});

test('a recursive schema ($ref back to the root or a $def, under a property) works; one that refers back to the same value is 400 naming the $ref, never a stack overflow', async () => {
  const rec = await postern.createOrg('recursive');
  const call = (method: string, path: string, body?: unknown) => postern.api(method, path, { key: rec.apiKey, body });
  expect((await call('PATCH', '/v1/org', { eventValidation: 'reject' })).status).toBe(200);
  const tree = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } };
  const created = await call('POST', '/v1/event-types', { name: 'tree.changed', description: 'd', schema: tree, examples: [{ name: 'a', children: [{ name: 'b', children: [] }] }] });
  expect([created.status, created.body.error?.message]).toEqual([201, undefined]);
  const linked = { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' }, v: { type: 'integer' } } } }, $ref: '#/$defs/node' };
  expect((await call('POST', '/v1/event-types', { name: 'list.changed', description: 'd', schema: linked })).status).toBe(201);

  const bad = await call('POST', '/v1/events', { type: 'tree.changed', data: { name: 'a', children: [{ name: 'b', children: [{ children: [] }] }] } });
  expect([bad.status, bad.body.error.details]).toEqual([422, [{ path: '/children/0/children/0/name', message: 'is required' }]]);
  // As deep as a body may nest (128 levels): checked, not a stack overflow.
  let deep: Record<string, unknown> = { v: 'x' };
  for (let i = 0; i < 120; i++) deep = { next: deep };
  const deepAnswer = await call('POST', '/v1/events', { type: 'list.changed', data: deep });
  expect([deepAnswer.status, deepAnswer.body.error.details[0].path]).toEqual([422, `${'/next'.repeat(120)}/v`]);

  for (const [schema, field, chain] of [
    [{ $ref: '#' }, 'schema.$ref', '#'],
    [{ type: 'object', allOf: [{ $ref: '#' }] }, 'schema.allOf.0.$ref', '# → #/allOf/0'],
    [{ $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }, 'schema.$defs.b.$ref', '#/$defs/a → #/$defs/b'],
  ] as const) {
    const r = await call('POST', '/v1/event-types', { name: 'loop.refused', description: 'd', schema });
    expect([field, r.status, r.body.error.code]).toEqual([field, 400, 'invalid_schema']);
    expect(r.body.error.message).toContain(`${field}: refers back to the same value without moving into a property or an item (${chain} → `);
    expect(r.body.error.message).not.toMatch(/call stack/i);
  }
});
