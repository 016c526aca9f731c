import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Ed25519 signatures (issue 13, item 5), as the Standard Webhooks specification defines them: an
 * endpoint created with `signatureScheme: "ed25519"` gets a `whsk_` secret key (kept by Postern) and
 * shows its `whpk_` public key; every request carries `webhook-signature: v1a,<base64>` over
 * `<webhook-id>.<webhook-timestamp>.<body>`, which Node's `crypto.verify` accepts with that public
 * key. A rotation signs with the old key and the new one until the grace period ends, as for HMAC,
 * and rotating with another `signatureScheme` switches scheme the same way.
 */

const GRACE_MS = 3000;

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern({ secretRotationGraceMs: GRACE_MS });
  receiver = await startReceiver();
  apiKey = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

/** Posts one event and returns the request the receiver got for it. */
async function deliverOne(type: string): Promise<ReceivedRequest> {
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: { at: Date.now(), note: 'Zoë ✓' } } });
  expect(posted.status).toBe(202);
  return waitUntil(`the ${type} request`, () => receiver.requests.find((r) => r.headers['webhook-id'] === posted.body.id));
}

function signatures(request: ReceivedRequest): string[] {
  return String(request.headers['webhook-signature']).split(' ');
}

/** Node's `crypto.verify` of one `v1a,…` signature of `request`, with a `whpk_` key as the API shows it. */
function nodeVerifies(publicKey: string, request: ReceivedRequest, signature: string): boolean {
  if (!signature.startsWith('v1a,')) return false;
  const x = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  expect(x).toHaveLength(32);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url') }, format: 'jwk' });
  const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`;
  return cryptoVerify(null, Buffer.from(signed, 'utf8'), key, Buffer.from(signature.slice(4), 'base64'));
}

test('an ed25519 endpoint shows its whpk_ public key, and every request verifies with it in Node', async () => {
  const created = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['ed.plain'], signatureScheme: 'ed25519' });
  expect(created.signatureScheme).toBe('ed25519');
  expect(created.secret).toMatch(/^whsk_[A-Za-z0-9+/]{86}==$/);
  expect(created.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);

  const shown = await postern.api('GET', `/v1/endpoints/${created.id}`, { key: apiKey });
  expect(shown.body).toMatchObject({ signatureScheme: 'ed25519', publicKey: created.publicKey });
  expect(JSON.stringify(shown.body)).not.toContain('whsk_');
  const listed = await postern.api('GET', '/v1/endpoints', { key: apiKey });
  expect(listed.body.data.find((e: { id: string }) => e.id === created.id)).toMatchObject({ signatureScheme: 'ed25519', publicKey: created.publicKey });
  expect((await postern.api('GET', `/v1/endpoints/${created.id}/secret`, { key: apiKey })).body).toEqual({ secret: created.secret, signatureScheme: 'ed25519', publicKey: created.publicKey, previous: 0 });

  const request = await deliverOne('ed.plain');
  const [signature, ...others] = signatures(request);
  expect(others).toEqual([]);
  expect(signature).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
  expect(nodeVerifies(shown.body.publicKey, request, signature!)).toBe(true);
  // The signature covers id, timestamp and body: change any and Node refuses it.
  expect(nodeVerifies(shown.body.publicKey, { ...request, body: request.body.replace('Zoë', 'Zoe') }, signature!)).toBe(false);
  expect(nodeVerifies(shown.body.publicKey, { ...request, headers: { ...request.headers, 'webhook-timestamp': String(Number(request.headers['webhook-timestamp']) + 1) } }, signature!)).toBe(false);

  // The attempt log shows the header as sent.
  const delivery = await waitUntil('the delivery to succeed', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${request.headers['webhook-delivery-id']}`, { key: apiKey });
    return r.body.status === 'succeeded' ? r.body : undefined;
  });
  expect(delivery.attempts[0].requestHeaders['webhook-signature']).toBe(signature);
});

test('during a rotation both keys sign, each signature verifies with its own public key; after the grace only the new one', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['ed.rotate.during', 'ed.rotate.after'], signatureScheme: 'ed25519' });
  const oldKey = endpoint.publicKey as string;

  const rotated = await postern.api('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key: apiKey });
  expect(rotated.status).toBe(200);
  expect(rotated.body.signatureScheme).toBe('ed25519');
  expect(rotated.body.secret).toMatch(/^whsk_/);
  expect(rotated.body.secret).not.toBe(endpoint.secret);
  const newKey = rotated.body.publicKey as string;
  expect(newKey).toMatch(/^whpk_/);
  expect(newKey).not.toBe(oldKey);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).body.publicKey).toBe(newKey);
  const graceEndsMs = Date.parse(rotated.body.previousSecretValidUntil);

  const during = await deliverOne('ed.rotate.during');
  // Signed before the grace ended, or this proves nothing.
  expect(Number(during.headers['webhook-timestamp']) * 1000).toBeLessThan(graceEndsMs);
  const [first, second, ...rest] = signatures(during);
  expect(rest).toEqual([]);
  expect(nodeVerifies(newKey, during, first!)).toBe(true);
  expect(nodeVerifies(oldKey, during, second!)).toBe(true);
  expect(nodeVerifies(oldKey, during, first!)).toBe(false);
  expect(nodeVerifies(newKey, during, second!)).toBe(false);

  await waitUntil('the grace period to end', () => Date.now() > graceEndsMs + 50, GRACE_MS + 2000);
  const after = await deliverOne('ed.rotate.after');
  expect(signatures(after)).toHaveLength(1);
  expect(nodeVerifies(newKey, after, signatures(after)[0]!)).toBe(true);
  expect(nodeVerifies(oldKey, after, signatures(after)[0]!)).toBe(false);
});

test('rotating an HMAC endpoint to ed25519 sends v1a with the new key and v1 with the old secret until the grace ends', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['ed.switch'] });
  expect(endpoint).toMatchObject({ signatureScheme: 'hmac-sha256', publicKey: null });
  expect(endpoint.secret).toMatch(/^whsec_/);

  const rotated = await postern.api('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key: apiKey, body: { signatureScheme: 'ed25519' } });
  expect(rotated.status).toBe(200);
  expect(rotated.body).toMatchObject({ signatureScheme: 'ed25519', publicKey: expect.stringMatching(/^whpk_/), secret: expect.stringMatching(/^whsk_/) });
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).body).toMatchObject({ signatureScheme: 'ed25519', publicKey: rotated.body.publicKey });

  const during = await deliverOne('ed.switch');
  expect(Number(during.headers['webhook-timestamp']) * 1000).toBeLessThan(Date.parse(rotated.body.previousSecretValidUntil));
  const [v1a, v1] = signatures(during);
  expect(nodeVerifies(rotated.body.publicKey, during, v1a!)).toBe(true);
  expect(v1).toMatch(/^v1,/);
  // A receiver still on the HMAC secret keeps verifying with the reference library meanwhile.
  expect(() => new Webhook(endpoint.secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();
});

test('a whsk_ key the client brings is kept, and its scheme follows from its prefix', async () => {
  // The key pair published with svix-server's README ("Configuring the keys").
  const secret = 'whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==';
  const created = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['none.ever'], secret });
  expect(created).toMatchObject({ secret, signatureScheme: 'ed25519', publicKey: 'whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=' });
});

describe('bad input', () => {
  const expectError = (r: { status: number; body: any }, status: number, code: string, message: RegExp) => {
    expect({ status: r.status, code: r.body.error?.code }).toEqual({ status, code });
    expect(r.body.error.message).toMatch(message);
  };

  test('an unknown signatureScheme is 400 naming the field and the schemes there are; nothing is stored', async () => {
    const before = (await postern.api('GET', '/v1/endpoints', { key: apiKey })).body.data.length;
    for (const signatureScheme of ['rsa', 'ED25519', 'v1a', 42, null]) {
      const r = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, signatureScheme } });
      expectError(r, 400, 'invalid_request', /^signatureScheme: signatureScheme must be one of "hmac-sha256", "ed25519"$/);
    }
    expect((await postern.api('GET', '/v1/endpoints', { key: apiKey })).body.data).toHaveLength(before);
  });

  test('a secret that does not fit the scheme is 400 naming secret', async () => {
    const whsec = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
    expectError(await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, signatureScheme: 'ed25519', secret: whsec } }), 400, 'invalid_request', /^secret: must be whsk_/);
    expectError(await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, signatureScheme: 'ed25519', secret: 'whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=' } }), 400, 'invalid_request', /whpk_ is the public key/);
    expectError(await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, secret: 'whsk_' + Buffer.alloc(64, 1).toString('base64') } }), 400, 'invalid_request', /^secret: must be whsk_/);
    expectError(await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, signatureScheme: 'hmac-sha256', secret: 'whsk_' + Buffer.alloc(64, 1).toString('base64') } }), 400, 'invalid_request', /^secret: must be whsec_/);
  });

  test('rotate-secret refuses an unknown scheme or field; PATCH points at rotate-secret for a scheme change', async () => {
    const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['none.ever'] });
    const path = `/v1/endpoints/${endpoint.id}`;
    expectError(await postern.api('POST', `${path}/rotate-secret`, { key: apiKey, body: { signatureScheme: 'rsa' } }), 400, 'invalid_request', /^signatureScheme: .*"ed25519"/);
    expectError(await postern.api('POST', `${path}/rotate-secret`, { key: apiKey, body: { scheme: 'ed25519' } }), 400, 'invalid_request', /^body: unknown field "scheme"$/);
    for (const rawBody of ['null', '[]', '"ed25519"']) {
      const r = await postern.api('POST', `${path}/rotate-secret`, { key: apiKey, rawBody, headers: { 'content-type': 'application/json' } });
      expectError(r, 400, 'invalid_request', /^body: must be empty, \{\} or \{"signatureScheme"/);
    }
    expectError(await postern.api('PATCH', path, { key: apiKey, body: { signatureScheme: 'ed25519' } }), 400, 'invalid_request', /^signatureScheme: .*rotate-secret/);
    // Nothing changed.
    expect((await postern.api('GET', `${path}/secret`, { key: apiKey })).body).toEqual({ secret: endpoint.secret, signatureScheme: 'hmac-sha256', publicKey: null, previous: 0 });
  });
});
