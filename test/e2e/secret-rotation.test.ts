import { Webhook } from 'standardwebhooks';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Secret rotation (issue 7): after `POST /v1/endpoints/:id/rotate-secret` every request carries a
 * signature with the new secret and one with the old until the grace period ends, so a receiver
 * using the `standardwebhooks` package verifies with either; after it, only the new one signs.
 */

const GRACE_MS = 1500;

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
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: { at: Date.now() } } });
  expect(posted.status).toBe(202);
  return waitUntil(`the ${type} request`, () => receiver.requests.find((r) => r.headers['webhook-id'] === posted.body.id));
}

function signatures(request: ReceivedRequest): string[] {
  return String(request.headers['webhook-signature']).split(' ');
}

function verifies(secret: string, request: ReceivedRequest): boolean {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

test('two signatures during the grace period, either secret verifies; afterwards only the new one', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['rotation.before', 'rotation.during_grace', 'rotation.after_grace'] });
  const oldSecret = endpoint.secret as string;

  const before = await deliverOne('rotation.before');
  expect(signatures(before)).toHaveLength(1);
  expect(verifies(oldSecret, before)).toBe(true);

  const rotated = await postern.api('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key: apiKey });
  expect(rotated.status).toBe(200);
  const newSecret = rotated.body.secret as string;
  expect(newSecret).toMatch(/^whsec_/);
  expect(newSecret).not.toBe(oldSecret);
  const graceEndsMs = Date.parse(rotated.body.previousSecretValidUntil);
  expect(graceEndsMs - Date.now()).toBeLessThanOrEqual(GRACE_MS);

  const during = await deliverOne('rotation.during_grace');
  // The request must have been signed before the grace ended, or this proves nothing.
  expect(Number(during.headers['webhook-timestamp']) * 1000).toBeLessThan(graceEndsMs);
  expect(signatures(during)).toHaveLength(2);
  expect(verifies(newSecret, during)).toBe(true);
  expect(verifies(oldSecret, during)).toBe(true);
  expect(verifies('whsec_' + Buffer.alloc(32, 7).toString('base64'), during)).toBe(false);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}/secret`, { key: apiKey })).body).toEqual({ secret: newSecret, signatureScheme: 'hmac-sha256', publicKey: null, previous: 1 });

  await waitUntil('the grace period to end', () => Date.now() > graceEndsMs + 50, GRACE_MS + 2000);

  const after = await deliverOne('rotation.after_grace');
  expect(signatures(after)).toHaveLength(1);
  expect(verifies(newSecret, after)).toBe(true);
  expect(verifies(oldSecret, after)).toBe(false);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}/secret`, { key: apiKey })).body).toEqual({ secret: newSecret, signatureScheme: 'hmac-sha256', publicKey: null, previous: 0 });
});

test('rotating twice within the grace keeps the first old secret until its own grace ends', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['twice.rotated'] });
  const first = endpoint.secret as string;
  const second = (await postern.api('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key: apiKey })).body.secret as string;
  const third = (await postern.api('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key: apiKey })).body.secret as string;
  const request = await deliverOne('twice.rotated');
  expect(signatures(request)).toHaveLength(3);
  for (const secret of [first, second, third]) expect(verifies(secret, request)).toBe(true);
});
