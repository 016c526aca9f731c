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

/**
 * The options got hands to `http.request` / `https.request` for one request: the same fields and
 * values as got 14's `Options#createNativeRequestOptions`, built in an order V8 builds cheaply.
 *
 * got's version is one object literal that begins with two spreads (`...cacheOptions`,
 * `...unixOptions`) followed by 30 named fields. On Node 20's V8 such a literal adds each field
 * through the runtime, copying the object's layout each time: about 23 KB allocated per call,
 * mostly in the old generation, so every attempt fed V8's full collections (Node 24's V8 builds
 * it in 1.5 KB). Here the named fields come first and the spread last (the two sets never share
 * a name), which V8 builds from a template: 0.35 KB.
 *
 * HTTP/2 and UNIX-socket requests, which Postern does not send, keep got's own code.
 * `apps/sender/src/got-request-options.test.ts` checks the result equals got's for the shapes
 * Postern sends (http, https, client certificates, custom CA, a DNS lookup, agents, headers), so
 * a got upgrade that adds a field fails there first.
 */
export function lighterNativeRequestOptions(this: Options): ReturnType<Options['createNativeRequestOptions']> {
  const self = this as unknown as GotOptionsInternals;
  const internals = self._internals;
  if (internals.http2 || self._unixOptions !== undefined) return gotNativeRequestOptions.call(this);
  const { https } = internals;
  return {
    // HTTPS options
    ALPNProtocols: https.alpnProtocols,
    ca: https.certificateAuthority,
    cert: https.certificate,
    key: https.key,
    passphrase: https.passphrase,
    pfx: https.pfx,
    rejectUnauthorized: https.rejectUnauthorized,
    checkServerIdentity: https.checkServerIdentity ?? checkServerIdentity,
    servername: https.serverName,
    ciphers: https.ciphers,
    honorCipherOrder: https.honorCipherOrder,
    minVersion: https.minVersion,
    maxVersion: https.maxVersion,
    sigalgs: https.signatureAlgorithms,
    sessionTimeout: https.tlsSessionLifetime,
    dhparam: https.dhparam,
    ecdhCurve: https.ecdhCurve,
    crl: https.certificateRevocationLists,
    secureOptions: https.secureOptions,
    // HTTP options
    lookup: internals.dnsLookup ?? internals.dnsCache?.lookup,
    family: internals.dnsLookupIpVersion,
    agent: internals.url.protocol === 'https:' ? internals.agent.https : internals.agent.http,
    setHost: internals.setHost,
    method: internals.method,
    maxHeaderSize: internals.maxHeaderSize,
    localAddress: internals.localAddress,
    headers: internals.headers,
    createConnection: internals.createConnection,
    timeout: undefined,
    // HTTP/2 options
    h2session: internals.h2session,
    ...internals.cacheOptions,
  } as ReturnType<Options['createNativeRequestOptions']>;
}

/**
 * Makes every got request of this process build its native options with
 * {@link lighterNativeRequestOptions}. Idempotent; the sender calls it when it creates its transport.
 */
export function useLighterNativeRequestOptions(): void {
  Options.prototype.createNativeRequestOptions = lighterNativeRequestOptions;
}
