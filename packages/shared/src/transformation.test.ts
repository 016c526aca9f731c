import {
  MAX_TRANSFORMATION_CODE_BYTES,
  MAX_TRANSFORMED_BODY_BYTES,
  MAX_TRANSFORMED_HEADERS,
  nextTransformation,
  planTransformedRequest,
  transformationCodeFits,
  transformationInput,
  transformedRequestRecord,
  TRANSFORMED_BODY_EXCERPT_BYTES,
} from './transformation.js';

const URL_ = 'https://receiver.example/hook';
const envelope = JSON.stringify({ id: 'evt_1', type: 'invoice.paid', timestamp: '2026-12-01T00:00:00.000Z', data: { amount: 4200 } });
const plan = (answer: unknown) => planTransformedRequest(answer, { url: URL_ });
const sent = (answer: unknown) => {
  const p = plan(answer);
  if (!p.ok || p.request.kind !== 'send') throw new Error(`expected a request, got ${JSON.stringify(p)}`);
  return p.request;
};
const refusal = (answer: unknown) => {
  const p = plan(answer);
  return p.ok ? null : p.message;
};

describe('transformationInput', () => {
  test('the envelope becomes the handler argument: data as payload, POST to the endpoint URL, no headers', () => {
    expect(transformationInput(envelope, URL_)).toEqual({ eventType: 'invoice.paid', eventId: 'evt_1', timestamp: '2026-12-01T00:00:00.000Z', payload: { amount: 4200 }, method: 'POST', url: URL_, headers: {} });
  });
  test('missing fields are empty strings and a null payload', () => {
    expect(transformationInput('{}', URL_)).toMatchObject({ eventType: '', eventId: '', timestamp: '', payload: null });
  });
  test('an envelope that is not JSON throws', () => {
    expect(() => transformationInput('{', URL_)).toThrow(SyntaxError);
  });
});

describe('planTransformedRequest', () => {
  test('the input returned unchanged is the payload as JSON, POST, to the endpoint URL', () => {
    expect(sent(transformationInput(envelope, URL_))).toEqual({ kind: 'send', method: 'POST', url: URL_, headers: {}, body: '{"amount":4200}', contentType: 'application/json' });
  });
  test('cancel: true drops the delivery, whatever else it says', () => {
    expect(plan({ cancel: true, method: 'DELETE' })).toEqual({ ok: true, request: { kind: 'cancel' } });
  });
  test('method: POST, PUT or PATCH in any case; others refused', () => {
    expect(sent({ method: 'put', payload: 1 }).method).toBe('PUT');
    expect(sent({ method: 'Patch', payload: 1 }).method).toBe('PATCH');
    expect(refusal({ method: 'DELETE' })).toBe('method must be one of POST, PUT, PATCH');
  });
  test('url: another URL passes the shape check; a bad one is refused with the reason', () => {
    expect(sent({ url: 'https://other.example/in', payload: 1 }).url).toBe('https://other.example/in');
    expect(refusal({ url: 'file:///etc/passwd' })).toBe('url is not usable (unsupported_scheme)');
    expect(refusal({ url: 'https://user:pw@other.example/' })).toBe('url is not usable (credentials_not_allowed)');
  });
  test('headers: names lower-cased; webhook-* and hop-by-hop refused; authorization allowed; content-type taken as the content type', () => {
    const r = sent({ headers: { 'X-Kind': 'a', Authorization: 'Bearer t', 'Content-Type': 'text/csv' }, body: 'a,b' });
    expect(r.headers).toEqual({ 'x-kind': 'a', authorization: 'Bearer t' });
    expect(r.contentType).toBe('text/csv');
    expect(refusal({ headers: { 'webhook-signature': 'v1,x' } })).toMatch(/^header webhook-signature: Postern's own/);
    expect(refusal({ headers: { connection: 'close' } })).toMatch(/^header connection: Postern's own or a hop-by-hop/);
    expect(refusal({ headers: { 'bad name': 'x' } })).toBe('header bad name: not a valid header name');
    expect(refusal({ headers: { 'x-a': 'line\nbreak' } })).toBe('header x-a: value is not a valid header value');
    expect(refusal({ headers: Object.fromEntries(Array.from({ length: MAX_TRANSFORMED_HEADERS + 1 }, (_, i) => [`x-${i}`, 'v'])) })).toBe(`at most ${MAX_TRANSFORMED_HEADERS} headers`);
  });
  test('body: a string body wins over payload, text/plain unless a content type is given', () => {
    expect(sent({ body: 'hello', payload: { ignored: true } })).toMatchObject({ body: 'hello', contentType: 'text/plain; charset=utf-8' });
    expect(sent({ body: 'a=1', contentType: 'application/x-www-form-urlencoded' }).contentType).toBe('application/x-www-form-urlencoded');
    expect(sent({ payload: [1, 'two'] })).toMatchObject({ body: '[1,"two"]', contentType: 'application/json' });
    expect(sent({ payload: null }).body).toBe('null');
    // Left out (not null): refused, rather than sending `null` and counting a success.
    expect(refusal({})).toBe('payload is required (any JSON value, null included), or a body string');
    expect(refusal({ payload: undefined, method: 'PUT' })).toBe('payload is required (any JSON value, null included), or a body string');
    expect(refusal({ body: 'x', contentType: '' })).toBe('contentType is not a valid header value');
  });
  test('the body is at most MAX_TRANSFORMED_BODY_BYTES bytes, counted in UTF-8', () => {
    expect(sent({ body: 'x'.repeat(MAX_TRANSFORMED_BODY_BYTES) }).body).toHaveLength(MAX_TRANSFORMED_BODY_BYTES);
    expect(refusal({ body: 'é'.repeat(MAX_TRANSFORMED_BODY_BYTES / 2 + 1) })).toBe(`body is larger than ${MAX_TRANSFORMED_BODY_BYTES} bytes`);
  });
  test.each([
    [null, 'handler must return an object (the webhook it was given, changed or not)'],
    [[1], 'handler must return an object (the webhook it was given, changed or not)'],
    ['text', 'handler must return an object (the webhook it was given, changed or not)'],
    [{ cancel: 'yes' }, 'cancel must be true or false'],
    [{ method: 5 }, 'method must be a string'],
    [{ method: null }, 'method must be a string'],
    [{ url: 5 }, 'url must be a string'],
    [{ headers: [] }, 'headers must be an object of strings'],
    [{ headers: 'x' }, 'headers must be an object of strings'],
    [{ headers: { a: 1 } }, 'headers must map names to strings'],
    [{ body: 5 }, 'body must be a string'],
    [{ contentType: 5 }, 'contentType must be a string'],
    // Fields are checked in order: the first problem is the one named.
    [{ method: 5, url: 5 }, 'method must be a string'],
  ])('%j is refused: %s', (answer, message) => {
    expect(plan(answer)).toEqual({ ok: false, reason: 'bad_result', message });
  });
});

describe('transformedRequestRecord', () => {
  const request = { kind: 'send' as const, method: 'POST' as const, url: URL_, headers: { 'x-a': '1' }, body: 'short', contentType: 'text/plain' };
  test('a short body is kept whole', () => {
    expect(transformedRequestRecord(3, request)).toEqual({ version: 3, method: 'POST', url: URL_, contentType: 'text/plain', headers: { 'x-a': '1' }, bodyExcerpt: 'short', bodyTruncated: false });
  });
  test('a long body keeps its first TRANSFORMED_BODY_EXCERPT_BYTES bytes', () => {
    const r = transformedRequestRecord(1, { ...request, body: 'y'.repeat(TRANSFORMED_BODY_EXCERPT_BYTES + 10) });
    expect(r.bodyExcerpt).toHaveLength(TRANSFORMED_BODY_EXCERPT_BYTES);
    expect(r.bodyTruncated).toBe(true);
  });
});

describe('transformationCodeFits and nextTransformation', () => {
  test('code fits up to MAX_TRANSFORMATION_CODE_BYTES UTF-8 bytes', () => {
    expect(transformationCodeFits('x'.repeat(MAX_TRANSFORMATION_CODE_BYTES))).toBe(true);
    expect(transformationCodeFits('é'.repeat(MAX_TRANSFORMATION_CODE_BYTES / 2 + 1))).toBe(false);
  });
  test('version 1 for new code, +1 when the code changes, kept when only enabled changes; null removes', () => {
    const first = nextTransformation(null, { code: 'a' }, 10);
    expect(first).toEqual({ code: 'a', enabled: true, version: 1, updatedAt: 10 });
    expect(nextTransformation(first, { code: 'a' }, 20)).toBe(first);
    expect(nextTransformation(first, { code: 'a', enabled: false }, 20)).toEqual({ code: 'a', enabled: false, version: 1, updatedAt: 20 });
    expect(nextTransformation({ ...first!, enabled: false }, { code: 'b' }, 30)).toEqual({ code: 'b', enabled: false, version: 2, updatedAt: 30 });
    expect(nextTransformation(first, null, 40)).toBeNull();
  });
  test('a transformation added again after its removal goes on from the highest version the endpoint had', () => {
    expect(nextTransformation(null, { code: 'c' }, 50, 3)).toEqual({ code: 'c', enabled: true, version: 4, updatedAt: 50 });
    expect(nextTransformation({ code: 'a', enabled: true, version: 2, updatedAt: 1 }, { code: 'b' }, 60, 5)?.version).toBe(6);
    expect(nextTransformation({ code: 'a', enabled: true, version: 7, updatedAt: 1 }, { code: 'b' }, 60, 5)?.version).toBe(8);
  });
});
