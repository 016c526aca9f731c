import { TRANSFORMATION_TEMPLATES, type TransformedRequest } from '@postern/shared';
import { createSandboxPool, type SandboxPool } from './sandbox-pool.js';
import { runTransformation } from './run-transformation.js';

let pool: SandboxPool;
beforeAll(() => {
  pool = createSandboxPool({ threads: 1, timeoutMs: 1000 });
});
afterAll(() => pool.close());

/** Runs a template on its own sample event. */
async function onSample(id: string, sample?: { eventType: string; payload: unknown }): Promise<TransformedRequest> {
  const template = TRANSFORMATION_TEMPLATES.find((t) => t.id === id)!;
  const s = sample ?? template.sample;
  const envelope = JSON.stringify({ id: 'evt_9', type: s.eventType, timestamp: '2026-12-01T10:00:00.000Z', data: s.payload });
  const verdict = await runTransformation(pool, { key: null, code: template.code, envelope, url: 'https://hooks.example/in', nowMs: 0 });
  if (!verdict.ok) throw new Error(`${id}: ${verdict.message}`);
  return verdict.request;
}

function sent(request: TransformedRequest): Extract<TransformedRequest, { kind: 'send' }> {
  if (request.kind !== 'send') throw new Error('expected a request to send');
  return request;
}

test('every template has an id, a description and a sample, and compiles', async () => {
  expect(TRANSFORMATION_TEMPLATES.map((t) => t.id)).toEqual(['slack', 'discord', 'teams-adaptive-card', 'google-chat', 'form-encoded', 'pick-fields', 'drop-events']);
  for (const t of TRANSFORMATION_TEMPLATES) {
    expect(t.description.length).toBeGreaterThan(20);
    expect(await pool.compile(t.code)).toEqual({ ok: true });
  }
});

test('Slack: a text fallback and Block Kit blocks (api.slack.com/messaging/webhooks)', async () => {
  const r = sent(await onSample('slack'));
  expect(r.contentType).toBe('application/json');
  const body = JSON.parse(r.body);
  expect(Object.keys(body).sort()).toEqual(['blocks', 'text']);
  expect(body.text).toBe('invoice.paid for Ada Lovelace (42.00 EUR)');
  expect(body.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: '*invoice.paid*\ninvoice.paid for Ada Lovelace (42.00 EUR)' } });
  for (const block of body.blocks) expect(['section', 'context']).toContain(block.type);
  expect(body.blocks[1].elements[0]).toEqual({ type: 'mrkdwn', text: 'Event evt_9' });
});

test('Discord: content ≤ 2000 characters and embeds with title ≤ 256 and description ≤ 4096', async () => {
  const body = JSON.parse(sent(await onSample('discord')).body);
  expect(typeof body.content).toBe('string');
  expect(body.content.length).toBeLessThanOrEqual(2000);
  expect(body.embeds).toHaveLength(1);
  const [embed] = body.embeds;
  expect(embed.title).toBe('invoice.paid');
  expect(embed.description.length).toBeLessThanOrEqual(4096);
  expect(embed.timestamp).toBe('2026-12-01T10:00:00.000Z');
  expect(embed.footer).toEqual({ text: 'evt_9' });
});

test('Teams: a message with one Adaptive Card attachment (type, $schema, version, body of elements)', async () => {
  const body = JSON.parse(sent(await onSample('teams-adaptive-card')).body);
  expect(body.type).toBe('message');
  expect(body.attachments).toHaveLength(1);
  const [attachment] = body.attachments;
  expect(attachment.contentType).toBe('application/vnd.microsoft.card.adaptive');
  expect(attachment.content).toMatchObject({ $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4' });
  expect(attachment.content.body.map((e: { type: string }) => e.type)).toEqual(['TextBlock', 'TextBlock', 'FactSet']);
  expect(attachment.content.body[2].facts).toContainEqual({ title: 'amount', value: '4200' });
});

test('Google Chat: {text} as JSON in UTF-8', async () => {
  const r = sent(await onSample('google-chat'));
  expect(r.contentType).toBe('application/json; charset=UTF-8');
  expect(JSON.parse(r.body)).toEqual({ text: '*invoice.paid*\ninvoice.paid for Ada Lovelace (42.00 EUR)' });
});

test('form-encoded: the body parses with URLSearchParams, nested values as JSON', async () => {
  const r = sent(await onSample('form-encoded'));
  expect(r.contentType).toBe('application/x-www-form-urlencoded');
  const form = new URLSearchParams(r.body);
  expect(form.get('event_type')).toBe('invoice.paid');
  expect(form.get('amount')).toBe('4200');
  expect(JSON.parse(form.get('customer')!)).toEqual({ id: 'cus_77', name: 'Ada Lovelace', email: 'ada@example.com' });
});

test('pick fields: only the listed paths', async () => {
  expect(JSON.parse(sent(await onSample('pick-fields')).body)).toEqual({ type: 'invoice.paid', id: 'evt_9', data: { id: 'in_1042', amount: 4200, currency: 'EUR', 'customer.id': 'cus_77' } });
});

test('drop events: its sample (an amount under 1.00) is cancelled; another event is sent in the envelope', async () => {
  expect(await onSample('drop-events')).toEqual({ kind: 'cancel' });
  const kept = sent(await onSample('drop-events', { eventType: 'invoice.paid', payload: { amount: 5000 } }));
  expect(JSON.parse(kept.body)).toEqual({ id: 'evt_9', type: 'invoice.paid', timestamp: '2026-12-01T10:00:00.000Z', data: { amount: 5000 } });
});
