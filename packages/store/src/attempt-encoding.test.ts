import { decodeAttemptCore, encodeAttempt, readAttempts } from './attempt-encoding.js';

const sent = { userAgent: 'Postern/1.2.0', timestampS: 1_796_000_001, signature: 'v1,5Ojv1eqbUqlYeJFGQ0Hqy6Xr6c55r/rGOd0QZ80g5QI=' };
const response = { headers: { 'content-type': 'application/json' }, headersTruncated: false, body: '{"error":"db\\ndown"}', bodyTruncated: false };

test('an attempt encodes to a short core (and its response after a newline only when kept) and decodes back', () => {
  const a = { number: 3, startedAt: 1_796_000_000_900, durationMs: 41, responseStatus: 200, error: null, sent };
  const encoded = encodeAttempt(a);
  expect(encoded).toBe('[1796000000900,41,200,null,"Postern/1.2.0",1,"v1,5Ojv1eqbUqlYeJFGQ0Hqy6Xr6c55r/rGOd0QZ80g5QI="]');
  expect(decodeAttemptCore(3, encoded)).toEqual(a);
  const failed = encodeAttempt({ ...a, responseStatus: 500, error: 'http_500', response });
  const [core, kept] = failed.split('\n');
  expect(JSON.parse(kept!)).toEqual(response);
  expect(decodeAttemptCore(3, core!)).toEqual({ ...a, responseStatus: 500, error: 'http_500' });
  // Nothing sent (e.g. a timeout before any request): trailing nulls left out.
  expect(encodeAttempt({ number: 1, startedAt: 5, durationMs: 10, responseStatus: null, error: 'timeout' })).toBe('[5,10,null,"timeout"]');
  expect(decodeAttemptCore(1, '[5]')).toEqual({ number: 1, startedAt: 5, durationMs: null, responseStatus: null, error: null });
});

test('attempts read from both hashes: cores with their responses, and attempts of the older format', () => {
  const legacy = { number: 1, startedAt: 1_000, durationMs: 5, responseStatus: 503, error: 'http_503', sent };
  const attempts = readAttempts(
    { eventId: 'evt_x', a2: '[2000,6,500,"http_500"]', a3: '[3000]' },
    { 1: JSON.stringify(legacy), 2: JSON.stringify(response) },
  );
  expect(attempts).toEqual([
    legacy,
    { number: 2, startedAt: 2000, durationMs: 6, responseStatus: 500, error: 'http_500', response },
    { number: 3, startedAt: 3000, durationMs: null, responseStatus: null, error: null },
  ]);
});
