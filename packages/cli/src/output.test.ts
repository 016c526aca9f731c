import { batchResultLine, liveLine } from './output.js';

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
