// What an endpoint sends besides Postern's own headers, in words: its auth, static headers and
// proxy, as GET /v1/endpoints/:id shows them (secrets are •••• there already).
import { h } from '../dom.js';
import { time } from '../format.js';

/** The endpoint's `auth` in one phrase: `Bearer token`, `Basic (user …)`, `OAuth 2.0 client credentials via <url>, client id …`. */
export function authSummary(auth) {
  if (!auth) return 'none';
  switch (auth.type) {
    case 'basic':
      return `Basic (user ${auth.username})`;
    case 'bearer':
      return 'Bearer token';
    case 'oauth2_client_credentials':
      return `OAuth 2.0 client credentials via ${auth.tokenUrl}, client id ${auth.clientId}${auth.scope ? `, scope ${auth.scope}` : ''}`;
    case 'mtls':
      return `mTLS client certificate${auth.ca ? ', own CA for the receiver' : ''}`;
    default:
      return auth.type;
  }
}

/** The endpoint's proxy in words: its URL and user, or the sender's default. */
function proxySummary(proxy) {
  if (!proxy) return 'none of its own (the sender’s EGRESS_PROXY_URL, if set)';
  return proxy.username === null ? proxy.url : `${proxy.url} (user ${proxy.username}, password ••••)`;
}

/** `facts()` pairs for the endpoint page: auth, when its last OAuth token came, static headers, proxy. */
export function requestSettingsFacts(endpoint) {
  const { auth, headers, proxy } = endpoint;
  return [
    ['Authentication', h('span', { id: 'auth-summary' }, authSummary(auth)), auth?.type === 'oauth2_client_credentials'],
    auth?.type === 'oauth2_client_credentials' ? ['Last token fetched', h('span', { id: 'token-fetched-at' }, auth.tokenFetchedAt ? time(auth.tokenFetchedAt, { withRelative: true }) : 'not yet')] : null,
    [
      'Static headers',
      headers.length === 0
        ? h('span', { id: 'static-headers' }, 'none')
        : h('ul', { id: 'static-headers', class: 'request-headers' }, headers.map((x) => h('li', null, h('code', null, `${x.name}: ${x.secret ? '••••' : x.value}`), x.secret ? h('span', { class: 'tag' }, 'secret') : null))),
      headers.length > 0,
    ],
    ['Proxy', h('span', { id: 'proxy-summary' }, proxySummary(proxy))],
  ];
}
