import {
  MASKED,
  addedRequestHeaders,
  bypassesProxy,
  clientSecretBasic,
  headerNameProblem,
  isValidHeaderValue,
  parseTokenAnswer,
  proxyForRequest,
  shownRequestHeaders,
  tokenCacheTtlMs,
  tokenRequestForm,
  type RequestSettings,
} from './request-settings.js';

describe('header rules', () => {
  it.each([
    ['X-Tenant', null],
    ["x!#$%&'*+-.^_`|~1", null],
    ['bad name', 'not_a_token'],
    ['x:y', 'not_a_token'],
    ['', 'not_a_token'],
    ['Webhook-Id', 'reserved'],
    ['webhook-anything', 'reserved'],
    ['Content-Length', 'reserved'],
    ['Proxy-Connection', 'reserved'],
    ['TE', 'reserved'],
    ['Upgrade', 'reserved'],
    ['Traceparent', 'reserved'],
    ['Authorization', 'use_auth'],
  ])('%s → %s', (name, problem) => expect(headerNameProblem(name)).toBe(problem));

  it('values: printable ASCII, no line breaks, no spaces at the ends', () => {
    expect(isValidHeaderValue('a b\tc')).toBe(true);
    expect(isValidHeaderValue('')).toBe(true);
    for (const bad of ['a\r\nb', 'a\nb', ' a', 'a ', 'é', '\u0000']) expect(isValidHeaderValue(bad)).toBe(false);
    expect(isValidHeaderValue('x'.repeat(4097))).toBe(false);
  });
});

describe('headers sent and shown', () => {
  const settings: RequestSettings = { headers: [{ name: 'X-A', secret: false, value: '1' }, { name: 'X-Key', secret: true }], auth: { type: 'bearer' }, proxy: null };
  it('sends the secret values and the authorization, shows neither', () => {
    expect(addedRequestHeaders(settings, { headers: { 'X-Key': 'k' } }, 'Bearer t')).toEqual({ 'X-A': '1', 'X-Key': 'k', authorization: 'Bearer t' });
    expect(shownRequestHeaders(settings)).toEqual({ 'x-a': '1', 'x-key': MASKED, authorization: MASKED });
    expect(shownRequestHeaders({ ...settings, auth: { type: 'mtls', certificate: 'pem', ca: null } })).not.toHaveProperty('authorization');
  });
});

describe('OAuth 2.0 client credentials (RFC 6749 §4.4)', () => {
  const auth = { type: 'oauth2_client_credentials' as const, tokenUrl: 'https://a.example/token', clientId: 'id 1', scope: 'a b', audience: null, extraParams: { resource: 'r' }, clientAuthentication: 'client_secret_basic' as const };
  it('form and client_secret_basic (each part form-urlencoded first)', () => {
    expect(tokenRequestForm(auth, 's')).toBe('grant_type=client_credentials&scope=a+b&resource=r');
    expect(tokenRequestForm({ ...auth, clientAuthentication: 'client_secret_post' }, 's:/')).toBe('grant_type=client_credentials&scope=a+b&resource=r&client_id=id+1&client_secret=s%3A%2F');
    expect(Buffer.from(clientSecretBasic('id 1', 'p:w/').slice(6), 'base64').toString()).toBe('id+1:p%3Aw%2F');
  });
  it('reads answers', () => {
    expect(parseTokenAnswer(200, '{"access_token":"t","token_type":"Bearer","expires_in":3600}')).toEqual({ ok: true, accessToken: 't', expiresInS: 3600 });
    expect(parseTokenAnswer(200, '{"access_token":"t"}')).toEqual({ ok: true, accessToken: 't', expiresInS: 300 });
    expect(parseTokenAnswer(401, '{}')).toEqual({ ok: false, reason: 'token_http_401' });
    for (const bad of ['nope', '{"token_type":"bearer"}', '{"access_token":"t","token_type":"mac"}', '{"access_token":"t","expires_in":-1}', '{"access_token":"a b"}']) {
      expect(parseTokenAnswer(200, bad)).toEqual({ ok: false, reason: 'token_bad_answer' });
    }
  });
  it('caches a token for its lifetime less 10 %, at most 60 s less', () => {
    expect(tokenCacheTtlMs(3600)).toBe(3_540_000);
    expect(tokenCacheTtlMs(100)).toBe(90_000);
  });
});

describe('egress proxy', () => {
  it('bypass entries match hosts and subdomains, or everything with *', () => {
    expect(bypassesProxy('api.example.com', ['example.com'])).toBe(true);
    expect(bypassesProxy('example.com', ['.example.com'])).toBe(true);
    expect(bypassesProxy('badexample.com', ['example.com'])).toBe(false);
    expect(bypassesProxy('10.0.0.1', ['10.0.0.1'])).toBe(true);
    expect(bypassesProxy('anything', ['*'])).toBe(true);
    expect(bypassesProxy('x.test', [])).toBe(false);
  });
  it("the endpoint's proxy overrides the global one, which the bypass list skips", () => {
    const base = { targetHost: 'hooks.example.com', endpointProxy: null, proxyPassword: undefined, globalProxyUrl: 'http://global:3128', bypass: ['internal.test'] };
    expect(proxyForRequest(base)).toBe('http://global:3128');
    expect(proxyForRequest({ ...base, targetHost: 'a.internal.test' })).toBeNull();
    expect(proxyForRequest({ ...base, endpointProxy: { url: 'http://own:8080', username: 'u@x' }, proxyPassword: 'p w' })).toBe('http://u%40x:p%20w@own:8080/');
    expect(proxyForRequest({ ...base, globalProxyUrl: null })).toBeNull();
  });
});
