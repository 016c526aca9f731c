import { checkServerIdentity } from 'node:tls';
import { Options } from 'got';

/**
 * What got's `Options#createNativeRequestOptions` reads (got 14 keeps it on `_internals`). Only
 * the fields used below.
 */
interface GotInternals {
  url: URL;
  http2: boolean;
  agent: { http?: unknown; https?: unknown };
  https: {
    alpnProtocols?: unknown;
    certificateAuthority?: unknown;
    certificate?: unknown;
    key?: unknown;
    passphrase?: unknown;
    pfx?: unknown;
    rejectUnauthorized?: unknown;
    checkServerIdentity?: unknown;
    serverName?: unknown;
    ciphers?: unknown;
    honorCipherOrder?: unknown;
    minVersion?: unknown;
    maxVersion?: unknown;
    signatureAlgorithms?: unknown;
    tlsSessionLifetime?: unknown;
    dhparam?: unknown;
    ecdhCurve?: unknown;
    certificateRevocationLists?: unknown;
    secureOptions?: unknown;
  };
  cacheOptions: Record<string, unknown>;
  dnsLookup?: unknown;
  dnsCache?: { lookup?: unknown };
  dnsLookupIpVersion?: unknown;
  setHost?: unknown;
  method?: unknown;
  maxHeaderSize?: unknown;
  localAddress?: unknown;
  headers?: unknown;
  createConnection?: unknown;
  h2session?: unknown;
}

/** An `Options` as its fields are at run time (got declares `_internals` and `_unixOptions` private). */
interface GotOptionsInternals {
  _internals: GotInternals;
  _unixOptions?: unknown;
}

/** got's own `createNativeRequestOptions`, kept for the shapes {@link lighterNativeRequestOptions} leaves to it. */
const gotNativeRequestOptions = Options.prototype.createNativeRequestOptions;

/** The TLS options got passes on, by the name Node reads and the name got keeps them under. */
const TLS_FIELDS = [
  ['ALPNProtocols', 'alpnProtocols'],
  ['ca', 'certificateAuthority'],
  ['cert', 'certificate'],
  ['key', 'key'],
  ['passphrase', 'passphrase'],
  ['pfx', 'pfx'],
  ['rejectUnauthorized', 'rejectUnauthorized'],
  ['servername', 'serverName'],
  ['ciphers', 'ciphers'],
  ['honorCipherOrder', 'honorCipherOrder'],
  ['minVersion', 'minVersion'],
  ['maxVersion', 'maxVersion'],
  ['sigalgs', 'signatureAlgorithms'],
  ['sessionTimeout', 'tlsSessionLifetime'],
  ['dhparam', 'dhparam'],
  ['ecdhCurve', 'ecdhCurve'],
  ['crl', 'certificateRevocationLists'],
  ['secureOptions', 'secureOptions'],
] as const satisfies readonly (readonly [string, keyof GotInternals['https']])[];

/**
 * The options got hands to `http.request` / `https.request` for one request: got 14's
 * `Options#createNativeRequestOptions` without the fields it leaves undefined, built in an order
 * V8 builds cheaply.
 *
 * got's version is one object literal that begins with two spreads (`...cacheOptions`,
 * `...unixOptions`) followed by 30 named fields. On Node 20's V8 such a literal adds each field
 * through the runtime, copying the object's layout each time: about 23 KB allocated per call,
 * mostly in the old generation, so every attempt fed V8's full collections (Node 24's V8 builds
 * it in 1.5 KB). Of its 34 fields a webhook request sets 5 (agent, method, headers, `setHost`,
 * `checkServerIdentity`); Node copies every field at least twice more (`ClientRequest` assigns
 * them onto the URL's options, the agent spreads them into a null-prototype object), so the
 * undefined ones are left out here. Node reads each of them as `undefined` whether it is absent
 * or set to undefined (`tls.connect`, where an explicit undefined overrides its defaults, treats
 * `rejectUnauthorized` as on unless it is `false`).
 *
 * HTTP/2 and UNIX-socket requests, which Postern does not send, keep got's own code.
 * `apps/sender/src/got-request-options.test.ts` checks the result equals got's, undefined fields
 * aside, for the shapes Postern sends (http, https, client certificates, custom CA, a DNS lookup,
 * agents, headers), so a got upgrade that adds a field fails there first.
 */
export function lighterNativeRequestOptions(this: Options): ReturnType<Options['createNativeRequestOptions']> {
  const self = this as unknown as GotOptionsInternals;
  const internals = self._internals;
  if (internals.http2 || self._unixOptions !== undefined) return gotNativeRequestOptions.call(this);
  const { https } = internals;
  // Added one by one rather than deleted afterwards: a delete would turn the object into a dictionary.
  const native: Record<string, unknown> = { checkServerIdentity: https.checkServerIdentity ?? checkServerIdentity };
  const agent = internals.url.protocol === 'https:' ? internals.agent.https : internals.agent.http;
  if (agent !== undefined) native.agent = agent;
  if (internals.setHost !== undefined) native.setHost = internals.setHost;
  if (internals.method !== undefined) native.method = internals.method;
  if (internals.headers !== undefined) native.headers = internals.headers;
  for (const [name, field] of TLS_FIELDS) if (https[field] !== undefined) native[name] = https[field];
  const lookup = internals.dnsLookup ?? internals.dnsCache?.lookup;
  if (lookup !== undefined) native.lookup = lookup;
  if (internals.dnsLookupIpVersion !== undefined) native.family = internals.dnsLookupIpVersion;
  if (internals.maxHeaderSize !== undefined) native.maxHeaderSize = internals.maxHeaderSize;
  if (internals.localAddress !== undefined) native.localAddress = internals.localAddress;
  if (internals.createConnection !== undefined) native.createConnection = internals.createConnection;
  if (internals.h2session !== undefined) native.h2session = internals.h2session;
  for (const name in internals.cacheOptions) if (internals.cacheOptions[name] !== undefined) native[name] = internals.cacheOptions[name];
  return native as ReturnType<Options['createNativeRequestOptions']>;
}

/**
 * Makes every got request of this process build its native options with
 * {@link lighterNativeRequestOptions}. Idempotent; the sender calls it when it creates its transport.
 */
export function useLighterNativeRequestOptions(): void {
  Options.prototype.createNativeRequestOptions = lighterNativeRequestOptions;
}
