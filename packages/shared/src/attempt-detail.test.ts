import { RESPONSE_HEADER_LIMITS, boundHeaders, isEndpointFailure, keepsResponse, webhookRequestHeaders } from './attempt-detail.js';
import { PRESETS } from './presets.js';
import { resolvePolicy } from './policy.js';

test('keepsResponse: failed (and missing, for endpoints stored before the field) keeps failures only; all; none', () => {
  expect([keepsResponse('failed', 'http_500'), keepsResponse('failed', null)]).toEqual([true, false]);
  expect([keepsResponse(undefined, 'timeout'), keepsResponse(undefined, null)]).toEqual([true, false]);
  expect([keepsResponse('all', null), keepsResponse('all', 'http_500')]).toEqual([true, true]);
  expect([keepsResponse('none', null), keepsResponse('none', 'http_500')]).toEqual([false, false]);
});

test('presets whose seed reads no body keep no response; the others keep failed ones', () => {
  const kept = Object.fromEntries(Object.entries(PRESETS).map(([name, p]) => [name, [p.policy.maxResponseBytesRead, p.policy.keepResponseBody]]));
  expect(kept).toEqual({
    standard: [4096, 'failed'],
    custral: [0, 'none'],
    'jitter-45h': [0, 'none'],
    tourical: [0, 'none'],
    kestrel: [4096, 'failed'],
    vestiarion: [1024, 'failed'],
  });
  const bad = resolvePolicy({ preset: 'standard', keepResponseBody: 'sometimes' });
  expect(bad.ok).toBe(false);
  expect(!bad.ok && bad.issues[0]!.path).toBe('policy.keepResponseBody');
});

test('boundHeaders keeps at most maxHeaders, cuts long values, stops at maxTotalBytes, joins repeats', () => {
  expect(boundHeaders({ 'Set-Cookie': ['a=1', 'b=2'], 'x-empty': undefined, 'x-one': 'v' })).toEqual({ headers: { 'set-cookie': 'a=1, b=2', 'x-one': 'v' }, truncated: false });
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, 'v']));
  const bounded = boundHeaders(many);
  expect(Object.keys(bounded.headers)).toHaveLength(RESPONSE_HEADER_LIMITS.maxHeaders);
  expect(bounded.truncated).toBe(true);
  const long = boundHeaders({ 'x-long': 'é'.repeat(400) });
  expect(long.truncated).toBe(true);
  expect(long.headers['x-long']!.endsWith('…')).toBe(true);
  expect(Buffer.byteLength(long.headers['x-long']!.slice(0, -1))).toBeLessThanOrEqual(RESPONSE_HEADER_LIMITS.maxValueBytes);
  const big = boundHeaders(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`x-b${i}`, 'x'.repeat(500)])));
  const total = Object.entries(big.headers).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v), 0);
  expect(total).toBeLessThanOrEqual(RESPONSE_HEADER_LIMITS.maxTotalBytes);
  expect(big.truncated).toBe(true);
});

test('webhookRequestHeaders: the Standard Webhooks headers and Postern’s own, in the order sent', () => {
  const headers = webhookRequestHeaders({ eventId: 'evt_1', deliveryId: 'dlv_2', attemptNumber: 3 }, { userAgent: 'Postern/0.1.0', timestampS: 1700000000, signature: 'v1,abc' });
  expect(Object.entries(headers)).toEqual([
    ['content-type', 'application/json'],
    ['user-agent', 'Postern/0.1.0'],
    ['webhook-id', 'evt_1'],
    ['webhook-timestamp', '1700000000'],
    ['webhook-signature', 'v1,abc'],
    ['webhook-attempt', '3'],
    ['webhook-delivery-id', 'dlv_2'],
    ['webhook-request-id', 'dlv_2.3'],
  ]);
});

test('isEndpointFailure: every error shows in the endpoint health but Postern’s own faults', () => {
  expect(['http_500', 'http_404', 'dns_lookup_failed:ENOTFOUND', 'timeout', 'unsafe_url:loopback'].map(isEndpointFailure)).toEqual([true, true, true, true, true]);
  expect([isEndpointFailure('internal:secret_unreadable'), isEndpointFailure(null)]).toEqual([false, false]);
});
