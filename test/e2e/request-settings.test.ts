import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Static headers and basic/bearer auth reach the receiver on every attempt; reads and the delivery
 * log show secrets as "••••"; every wrong shape of a new field is a 400 naming it, and nothing is
 * written.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver();
  ({ apiKey } = await postern.createOrg('request-settings'));
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

async function deliveredOnce(endpointId: string): Promise<any> {
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(posted.status).toBe(202);
  const delivery = posted.body.deliveries.find((d: any) => d.endpointId === endpointId);
  return waitUntil('the delivery to succeed', async () => {
    const got = await postern.api('GET', `/v1/deliveries/${delivery.id}`, { key: apiKey });
    return got.body.status === 'succeeded' ? got.body : undefined;
  });
}

test('static headers and basic auth are sent; reads and the log show secrets as ••••', async () => {
  const created = await postern.createEndpoint(apiKey, {
    url: receiver.url,
    eventTypes: ['invoice.paid'],
    headers: [
      { name: 'X-Tenant', value: 'acme' },
      { name: 'X-Api-Key', value: 'k-123-secret', secret: true },
    ],
    auth: { type: 'basic', username: 'postern', password: 'pa55:word' },
  });
  expect(created.headers).toEqual([
    { name: 'X-Tenant', value: 'acme', secret: false },
    { name: 'X-Api-Key', value: '••••', secret: true },
  ]);
  expect(created.auth).toEqual({ type: 'basic', username: 'postern', password: '••••' });
  expect(JSON.stringify(created)).not.toContain('k-123-secret');
  expect(JSON.stringify(created)).not.toContain('pa55');

  const delivery = await deliveredOnce(created.id);
  const sent = receiver.requests.at(-1)!;
  expect(sent.headers['x-tenant']).toBe('acme');
  expect(sent.headers['x-api-key']).toBe('k-123-secret');
  expect(sent.headers.authorization).toBe(`Basic ${Buffer.from('postern:pa55:word').toString('base64')}`);
  const logged = delivery.attempts[0].requestHeaders;
  expect(logged).toMatchObject({ 'x-tenant': 'acme', 'x-api-key': '••••', authorization: '••••', 'webhook-id': delivery.eventId });
  expect(JSON.stringify(delivery)).not.toContain('k-123-secret');

  const read = await postern.api('GET', `/v1/endpoints/${created.id}`, { key: apiKey });
  expect(read.body.headers[1]).toEqual({ name: 'X-Api-Key', value: '••••', secret: true });

  // A PATCH naming a secret header without its value keeps the stored value; a bearer token replaces basic.
  const patched = await postern.api('PATCH', `/v1/endpoints/${created.id}`, { key: apiKey, body: { headers: [{ name: 'X-Api-Key', secret: true }], auth: { type: 'bearer', token: 'tok_abc.def' } } });
  expect(patched.status).toBe(200);
  expect(patched.body.auth).toEqual({ type: 'bearer', token: '••••' });
  await deliveredOnce(created.id);
  const again = receiver.requests.at(-1)!;
  expect(again.headers['x-api-key']).toBe('k-123-secret');
  expect(again.headers['x-tenant']).toBeUndefined();
  expect(again.headers.authorization).toBe('Bearer tok_abc.def');

  const removed = await postern.api('PATCH', `/v1/endpoints/${created.id}`, { key: apiKey, body: { auth: null, headers: [] } });
  expect(removed.body).toMatchObject({ auth: null, headers: [], proxy: null });
  await deliveredOnce(created.id);
  expect(receiver.requests.at(-1)!.headers.authorization).toBeUndefined();
  await postern.api('DELETE', `/v1/endpoints/${created.id}`, { key: apiKey });
});

describe('bad input is a 400 naming the field, and nothing is written', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['headers not a list', { headers: { a: 'b' } }, 'headers'],
    ['more than 20 headers', { headers: Array.from({ length: 21 }, (_, i) => ({ name: `x-h${i}`, value: 'v' })) }, 'headers'],
    ['a header name that is not a token', { headers: [{ name: 'bad name', value: 'v' }] }, 'headers.0.name'],
    ['webhook-* headers', { headers: [{ name: 'x-ok', value: 'v' }, { name: 'Webhook-Signature', value: 'v' }] }, 'headers.1.name'],
    ['content-type', { headers: [{ name: 'Content-Type', value: 'text/plain' }] }, 'headers.0.name'],
    ['host', { headers: [{ name: 'host', value: 'example.com' }] }, 'headers.0.name'],
    ['user-agent', { headers: [{ name: 'User-Agent', value: 'x' }] }, 'headers.0.name'],
    ['traceparent', { headers: [{ name: 'traceparent', value: 'x' }] }, 'headers.0.name'],
    ['hop-by-hop', { headers: [{ name: 'Transfer-Encoding', value: 'chunked' }] }, 'headers.0.name'],
    ['proxy-*', { headers: [{ name: 'Proxy-Authorization', value: 'x' }] }, 'headers.0.name'],
    ['authorization', { headers: [{ name: 'Authorization', value: 'x' }] }, 'headers.0.name'],
    ['a duplicate name', { headers: [{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }] }, 'headers.1.name'],
    ['a value with a line break', { headers: [{ name: 'X-A', value: 'a\r\nb: c' }] }, 'headers.0.value'],
    ['a header without value', { headers: [{ name: 'X-A' }] }, 'headers.0.value'],
    ['secret not boolean', { headers: [{ name: 'X-A', value: 'v', secret: 'yes' }] }, 'headers.0.secret'],
    ['an unknown auth type', { auth: { type: 'digest' } }, 'auth.type'],
    ['auth not an object', { auth: 'basic' }, 'auth'],
    ['basic without password', { auth: { type: 'basic', username: 'u' } }, 'auth.password'],
    ['basic username with a colon', { auth: { type: 'basic', username: 'a:b', password: 'p' } }, 'auth.username'],
    ['bearer without token', { auth: { type: 'bearer' } }, 'auth.token'],
    ['bearer token with a space', { auth: { type: 'bearer', token: 'a b' } }, 'auth.token'],
    ['oauth2 without tokenUrl', { auth: { type: 'oauth2_client_credentials', clientId: 'c', clientSecret: 's' } }, 'auth.tokenUrl'],
    ['oauth2 with a bad tokenUrl', { auth: { type: 'oauth2_client_credentials', tokenUrl: 'ftp://x', clientId: 'c', clientSecret: 's' } }, 'auth.tokenUrl'],
    ['oauth2 without clientSecret', { auth: { type: 'oauth2_client_credentials', tokenUrl: 'https://auth.example.com/token', clientId: 'c' } }, 'auth.clientSecret'],
    ['oauth2 with a reserved extra param', { auth: { type: 'oauth2_client_credentials', tokenUrl: 'https://auth.example.com/token', clientId: 'c', clientSecret: 's', extraParams: { grant_type: 'password' } } }, 'auth.extraParams.grant_type'],
    ['oauth2 with a bad clientAuthentication', { auth: { type: 'oauth2_client_credentials', tokenUrl: 'https://auth.example.com/token', clientId: 'c', clientSecret: 's', clientAuthentication: 'jwt' } }, 'auth.clientAuthentication'],
    ['mtls with a certificate that is not PEM', { auth: { type: 'mtls', certificate: 'hello', privateKey: 'x' } }, 'auth.certificate'],
    ['an unknown auth field', { auth: { type: 'bearer', token: 't', extra: 1 } }, 'auth'],
    ['headers adding up to more than 8 KB', { headers: Array.from({ length: 3 }, (_, i) => ({ name: `x-h${i}`, value: 'v'.repeat(4000) })) }, 'headers'],
    ['the read mask as a new secret, nothing stored to keep', { auth: { type: 'bearer', token: '••••' } }, 'auth.token'],
    ['the read mask as a new secret header, nothing stored to keep', { headers: [{ name: 'X-Key', value: '••••', secret: true }] }, 'headers.0.value'],
    ['proxy not a string', { proxy: 3128 }, 'proxy'],
    ['a socks proxy', { proxy: 'socks5://127.0.0.1:1080' }, 'proxy'],
    ['a proxy with a path', { proxy: 'http://proxy.example.com:3128/path' }, 'proxy'],
    ['a proxy that is not a URL', { proxy: 'proxy:3128:x' }, 'proxy'],
  ];
  it.each(cases)('%s', async (_what, fields, field) => {
    const before = await postern.api('GET', '/v1/endpoints', { key: apiKey });
    const res = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: 'https://hooks.example.com/x', ...fields } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message.startsWith(`${field}:`)).toBe(true);
    const after = await postern.api('GET', '/v1/endpoints', { key: apiKey });
    expect(after.body.data.length).toBe(before.body.data.length);
  });

  it('a PATCH with a bad field changes nothing', async () => {
    const created = await postern.createEndpoint(apiKey, { url: 'https://hooks.example.com/y', headers: [{ name: 'X-A', value: '1' }], policy: fastPolicy(1) });
    const res = await postern.api('PATCH', `/v1/endpoints/${created.id}`, { key: apiKey, body: { description: 'changed', headers: [{ name: 'Host', value: 'x' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^headers\.0\.name:/);
    const read = await postern.api('GET', `/v1/endpoints/${created.id}`, { key: apiKey });
    expect(read.body).toMatchObject({ description: '', headers: [{ name: 'X-A', value: '1', secret: false }] });
  });

  it('an endpoint read and written back whole keeps its secrets: the mask stands for the stored value', async () => {
    const created = await postern.createEndpoint(apiKey, {
      url: receiver.url,
      eventTypes: ['invoice.paid'],
      headers: [{ name: 'X-Key', value: 'k-secret-1', secret: true }],
      auth: { type: 'basic', username: 'u', password: 'p-secret-1' },
      policy: fastPolicy(1),
    });
    const read = await postern.api('GET', `/v1/endpoints/${created.id}`, { key: apiKey });
    expect(read.body.auth).toMatchObject({ type: 'basic', username: 'u', password: '••••' });
    const written = await postern.api('PATCH', `/v1/endpoints/${created.id}`, { key: apiKey, body: { headers: read.body.headers, auth: { type: 'basic', username: 'u', password: read.body.auth.password } } });
    expect(written.status).toBe(200);
    const sent = await deliveredOnce(created.id);
    expect(sent.status).toBe('succeeded');
    const request = receiver.requests.at(-1)!;
    expect(request.headers['x-key']).toBe('k-secret-1');
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('u:p-secret-1').toString('base64')}`);
  });

  it('a proxy at a literal private address not allowed is unsafe_url', async () => {
    const res = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: 'https://hooks.example.com/x', proxy: 'http://10.1.2.3:3128' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'unsafe_url' });
    expect(res.body.error.message).toMatch(/^proxy:/);
  });
});

test("a followed redirect to another origin carries none of the endpoint's headers or credentials", async () => {
  const elsewhere = await startReceiver();
  const redirecting = await startReceiver((_req, _n, res) => {
    res.writeHead(307, { location: elsewhere.url });
    res.end();
    return 'handled';
  });
  try {
    const created = await postern.createEndpoint(apiKey, {
      url: redirecting.url,
      eventTypes: ['invoice.paid'],
      policy: { preset: 'tourical', ...fastPolicy(1) },
      headers: [{ name: 'X-Api-Key', value: 'k-secret', secret: true }, { name: 'X-Plain', value: 'p' }],
      auth: { type: 'bearer', token: 'tok-secret' },
    });
    await deliveredOnce(created.id);
    expect(redirecting.requests[0]!.headers).toMatchObject({ 'x-api-key': 'k-secret', authorization: 'Bearer tok-secret' });
    const hop = elsewhere.requests[0]!;
    expect(hop.headers['x-api-key']).toBeUndefined();
    expect(hop.headers['x-plain']).toBeUndefined();
    expect(hop.headers.authorization).toBeUndefined();
    expect(hop.headers['webhook-id']).toBeDefined();
    await postern.api('DELETE', `/v1/endpoints/${created.id}`, { key: apiKey });
  } finally {
    await redirecting.close();
    await elsewhere.close();
  }
});
