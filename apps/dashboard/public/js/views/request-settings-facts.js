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
    case 'mtls': {
      const cn = certificateCommonName(auth.certificate);
      return `mTLS client certificate${cn ? ` (CN ${cn})` : ''}${auth.ca ? ', own CA for the receiver' : ''}`;
    }
    default:
      return auth.type;
  }
}

/** One DER TLV at `at`: its tag, where its content starts and ends; null past the end or when malformed. */
function tlv(bytes, at) {
  if (at + 2 > bytes.length) return null;
  const tag = bytes[at];
  let length = bytes[at + 1];
  let start = at + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 3 || start + count > bytes.length) return null;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i];
    start += count;
  }
  const end = start + length;
  return end > bytes.length ? null : { tag, start, end };
}

/** The children of a constructed DER value. */
function children(bytes, parent) {
  const out = [];
  for (let at = parent.start; at < parent.end; ) {
    const child = tlv(bytes, at);
    if (!child) return out;
    out.push(child);
    at = child.end;
  }
  return out;
}

/**
 * The subject's common name (OID 2.5.4.3) of the first certificate of a PEM bundle, or null when
 * it has none or does not parse: RFC 5280 §4.1, Certificate → tbsCertificate → subject, the sixth
 * field (the seventh with the optional `[0]` version).
 */
export function certificateCommonName(pem) {
  const base64 = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(pem ?? '')?.[1]?.replace(/\s+/g, '');
  if (!base64) return null;
  let bytes;
  try {
    bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
  const cert = tlv(bytes, 0);
  const tbs = cert && children(bytes, cert)[0];
  if (!tbs) return null;
  const fields = children(bytes, tbs);
  const subject = fields[fields[0]?.tag === 0xa0 ? 5 : 4];
  if (!subject) return null;
  for (const rdn of children(bytes, subject)) {
    for (const attribute of children(bytes, rdn)) {
      const [oid, value] = children(bytes, attribute);
      if (oid && value && oid.end - oid.start === 3 && bytes[oid.start] === 0x55 && bytes[oid.start + 1] === 0x04 && bytes[oid.start + 2] === 0x03) {
        return new TextDecoder().decode(bytes.subarray(value.start, value.end));
      }
    }
  }
  return null;
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
