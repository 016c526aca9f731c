import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { lookup } from 'node:dns';
import { Options } from 'got';
import { lighterNativeRequestOptions } from './got-request-options.js';

/**
 * The lighter builder must give what got's own `createNativeRequestOptions` gives (same fields,
 * same values, none missing or extra) for every shape of request the sender makes, less the
 * fields got leaves undefined; a got upgrade that changes that function fails here.
 */
const gotOwn = Options.prototype.createNativeRequestOptions;
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
afterAll(() => {
  agents.http.destroy();
  agents.https.destroy();
});

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test.each<[string, string, ConstructorParameters<typeof Options>[1]]>([
  ['a plain http POST', 'http://127.0.0.1:8080/hook', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }],
  ['https through the sender\'s agents', 'https://example.com/hook', { method: 'POST', agent: agents, headers: { 'webhook-id': 'msg_1' }, timeout: { request: 15_000 } }],
  ['https with a client certificate and its own CA', 'https://example.com/hook', { method: 'PUT', agent: agents, https: { certificate: PEM, key: 'key', certificateAuthority: PEM, rejectUnauthorized: true } }],
  ['per-phase timeouts and a DNS lookup', 'http://example.com/hook', { method: 'PATCH', agent: agents, dnsLookup: lookup as never, timeout: { lookup: 5, connect: 5, send: 5, response: 5 } }],
  ['an IPv4-only lookup, a local address and a header size', 'http://example.com/hook', { dnsLookupIpVersion: 4, localAddress: '127.0.0.1', maxHeaderSize: 32_768 }],
  ['the cache options got sets when asked', 'http://example.com/hook', { cacheOptions: { shared: false, immutableMinTimeToLive: 1000 } }],
])('%s: the same native options as got\'s own, less the undefined ones', (_name, url, options) => {
  const o = new Options(url, options);
  const own = gotOwn.call(o) as Record<string, unknown>;
  const lighter = lighterNativeRequestOptions.call(o) as Record<string, unknown>;
  expect(lighter).toStrictEqual(Object.fromEntries(Object.entries(own).filter(([, value]) => value !== undefined)));
  expect(Object.keys(lighter).length).toBeLessThan(Object.keys(own).length);
});

test('a webhook request passes Node 5 fields rather than got\'s 34', () => {
  const o = new Options('http://127.0.0.1:8080/hook', { method: 'POST', body: '{}', agent: agents, headers: { 'content-type': 'application/json' }, timeout: { request: 15_000 } });
  expect(Object.keys(lighterNativeRequestOptions.call(o)).sort()).toEqual(['agent', 'checkServerIdentity', 'headers', 'method', 'setHost']);
  expect(Object.keys(gotOwn.call(o))).toHaveLength(34);
});

test('HTTP/2 and UNIX-socket requests are left to got\'s own code', () => {
  for (const o of [new Options('https://example.com/hook', { http2: true }), new Options('http://unix:/tmp/postern.sock:/hook', { enableUnixSockets: true })]) {
    expect(lighterNativeRequestOptions.call(o)).toStrictEqual(gotOwn.call(o));
  }
});
