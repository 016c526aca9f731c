import { escapeNotPrintable } from '@postern/shared';
import { batchResultLine, deliveryLines, liveLine } from './output.js';

describe('liveLine', () => {
  it('shows one attempt on one line: time, status, ids, type, attempt, answer, error, duration, next', () => {
    const line = liveLine({ id: '1-0', deliveryId: 'dlv_1', endpointId: 'ep_1', eventId: 'evt_1', eventType: 'invoice.paid', status: 'pending', attempt: 2, responseStatus: 503, error: 'http_503', durationMs: 12, nextAttemptAt: '2026-12-01T12:00:05.000Z', at: '2026-12-01T12:00:00.123Z' });
    expect(line.replace(/\x1b\[[0-9;]*m/g, '')).toBe('12:00:00 pending   dlv_1 ep_1 invoice.paid #2 503 http_503 12ms next 12:00:05');
  });
  it('says when a delivery changed without an attempt', () => {
    const line = liveLine({ id: '1-0', deliveryId: 'dlv_1', endpointId: 'ep_1', eventId: 'evt_1', eventType: 'a.b', status: 'cancelled', attempt: null, responseStatus: null, error: 'endpoint_inactive', durationMs: null, nextAttemptAt: null, at: '2026-12-01T12:00:00.123Z' });
    expect(line.replace(/\x1b\[[0-9;]*m/g, '')).toBe('12:00:00 cancelled dlv_1 ep_1 a.b no attempt endpoint_inactive');
  });
});

test("batchResultLine: a refusal's events[i] is left out, the line already places the event", () => {
  const refused = (message: string) => batchResultLine('line 42', { status: 400, error: { code: 'invalid_request', message } } as never);
  expect(refused('events[41].type: webhook.test is reserved')).toMatch(/^line 42: .*refused 400 invalid_request.*: type: webhook\.test is reserved$/);
  expect(refused('events[3]: must be a JSON object')).toMatch(/: must be a JSON object$/);
  expect(refused('this idempotencyKey was used')).toMatch(/: this idempotencyKey was used$/);
});

describe('what a receiver sent reaches the terminal as visible escapes', () => {
  const hostile = '\x1b]0;PWNED\x07\x1b[2J\x1b[31mRED\u202eevil\r\nFAKE LINE 16:00:00 succeeded dlv_fake\u0085\u2028';

  test('escapeNotPrintable escapes controls, C1, line separators and bidirectional controls, and keeps the rest', () => {
    expect(escapeNotPrintable(hostile)).toBe('\\u001b]0;PWNED\\u0007\\u001b[2J\\u001b[31mRED\\u202eevil\\r\\nFAKE LINE 16:00:00 succeeded dlv_fake\\u0085\\u2028');
    expect(escapeNotPrintable('{"ok":true} café 👨\u200d👩 tab\there')).toBe('{"ok":true} café 👨\u200d👩 tab\\there');
  });

  test('deliveries show: the answer\'s body and headers are one line each, with nothing a terminal acts on', () => {
    const lines = deliveryLines({
      id: 'dlv_1', status: 'failed', eventId: 'evt_1', eventType: 'a.b', endpointId: 'ep_1', createdAt: '2026-12-03T16:00:00.000Z', nextAttemptAt: null, cancelReason: null, redeliveredFromId: null,
      attempts: [{ number: 1, startedAt: '2026-12-03T16:00:00.000Z', responseStatus: 500, error: 'http_500', durationMs: 3, requestHeaders: { 'webhook-id': 'msg_1' }, response: { headers: { 'x-evil\u202e': hostile }, body: hostile } }],
    } as never);
    const text = lines.join('\n').replace(/\x1b\[[0-9;]*m/g, '');
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    expect(lines.filter((l) => l.includes('PWNED'))).toHaveLength(2);
  });
});
