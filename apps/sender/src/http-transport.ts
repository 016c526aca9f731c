import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { got, type Got, type Response } from 'got';
import { boundHeaders, keepsResponse, type KeptHeaders, type Policy } from '@postern/shared';
import { createGuardedAgents } from './address-guard.js';
import { createDnsCache } from './dns-cache.js';
import type { LookupAll } from './destination-check.js';
import { useLighterNativeRequestOptions } from './got-request-options.js';
import { classifyNetworkError } from './network-errors.js';
import { ProxyAgentCache } from './proxy-agents.js';

/** A client certificate presented on the TLS handshake (mTLS), PEM; `ca` replaces the default roots for the receiver's certificate. */
export interface ClientCertificate {
  certificate: string;
  privateKey: string;
  ca: string | null;
}

/** One signed POST to an endpoint, with the policy rules that shape it. */
export interface OutboundRequest {
  url: string;
  /** `POST` unless the endpoint's transformation chose `PUT` or `PATCH`. */
  method?: 'POST' | 'PUT' | 'PATCH';
  headers: Record<string, string>;
  body: string;
  timeout: Policy['timeout'];
  redirects: Policy['redirects'];
  /** Read the response until it ends or more than this many bytes arrived, then close it. */
  maxResponseBytesRead: number;
  /**
   * Which answers to return the headers and body excerpt of (the policy's `keepResponseBody`):
   * `failed` = any non-2xx. Default `none`: status only.
   */
  keepResponseBody?: Policy['keepResponseBody'];
  /** Headers (the endpoint's own and `authorization`) never sent to another origin a redirect points at. */
  originOnlyHeaders?: readonly string[];
  /** Send through this egress proxy (`proxy-agents.ts`); absent or null = direct. */
  proxyUrl?: string | null;
  /** Present this client certificate to an https:// receiver; absent or null = none. */
  clientCertificate?: ClientCertificate | null;
}

/** What the transport kept of an answer: bounded headers and the body's first bytes as UTF-8 text. */
export interface ResponseDetail {
  headers: KeptHeaders;
  /** True when headers were left out or cut (`RESPONSE_HEADER_LIMITS`). */
  headersTruncated: boolean;
  /** At most `maxResponseBytesRead` bytes of the body, decoded as UTF-8 (invalid bytes as U+FFFD). */
  body: string;
  /** True when the body had more bytes than were kept. */
  bodyTruncated: boolean;
}

/**
 * What came back: a status (any, 3xx included) with, where `keepResponseBody` asks for it, the
 * answer's {@link ResponseDetail} (else null); or an error code from the closed set.
 */
export type TransportResult =
  | { kind: 'response'; status: number; retryAfter: string | undefined; bodyBytesRead: number; detail?: ResponseDetail | null }
  | { kind: 'error'; code: string };

/**
 * The sender's only way out to the network. One small interface so tests can inject a receiver
 * double and a faster client can be measured behind it.
 */
export interface DeliveryTransport {
  send(request: OutboundRequest): Promise<TransportResult>;
  /** Closes idle keep-alive sockets. */
  close(): void;
}

/**
 * How long a keep-alive socket may sit idle before Postern closes it, ms: under the 5 s
 * keep-alive timeout of Node's http server (and nginx's 75 s, Apache's 5 s), so a receiver
 * rarely closes a socket just as Postern reuses it. Node also honours a receiver's shorter
 * `Keep-Alive: timeout=N` hint (N s minus 1 s).
 */
export const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/** Options of {@link createGotTransport}. */
export interface GotTransportOptions {
  /** Addresses/CIDRs allowed despite being private (`ALLOWED_ADDRESSES`, canonical as `parseAllowList` gives them). */
  allowList: readonly string[];
  /** Names why an address is refused (`loopback`, `private`, …), the allow-list applied; null = allowed. */
  classifyAddress: (address: string) => string | null;
  /**
   * Every address of a host name, for the connect-time guard. Pass the `lookupAll` of the
   * sender's `createDnsCache()` (also given to the pre-send check) so one answer serves both.
   * Default: a DNS cache of this transport's own.
   */
  lookupAll?: LookupAll;
  /** Default {@link IDLE_SOCKET_TIMEOUT_MS}. */
  idleSocketTimeoutMs?: number;
}

/** Node's codes for a socket the peer closed under a request: `socket hang up` is ECONNRESET. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * The production transport: got, configured once (`got.extend`), through agents that check the
 * address of every socket they open (each redirect hop and each new keep-alive socket) with
 * Postern's own `classifyAddress` (see `address-guard.ts`), so a DNS answer that changes between
 * the pre-send check and the connection cannot reach a refused address.
 *
 * Per request only the URL, headers, body, timeouts, redirect rule and (when redirects are
 * followed under `whole-response`) an abort signal are given to got; the agents, `retry: {limit:
 * 0}` (BullMQ owns retries), `throwHttpErrors: false`, `decompress: false` and the redirect hook
 * are merged once. Each request's options for Node's `http.request` are built by
 * `lighterNativeRequestOptions` (the same fields as got's own builder, at 1/60 of the allocation).
 *
 * Timeouts (kestrel vs the other presets): `whole-response` puts a hard deadline on the whole exchange,
 * redirect hops included; `response-headers` counts from when the request is written until the
 * status line and headers arrive. In that mode each phase before it (DNS lookup, connect, TLS
 * handshake, writing the request) gets the same limit too, so a peer that accepts a connection and
 * then goes silent cannot hold an attempt, and its worker slot, forever. The attempt ends at the
 * headers; the body is then read in the background (at most `maxResponseBytesRead` bytes, within
 * the same limit) only so that the socket can be reused.
 *
 * A `101 Switching Protocols` answer is recorded as that status (`http_101`) and its socket
 * closed: Node hands an upgraded socket over and reports nothing more, which would otherwise hold
 * the attempt and its worker slot forever. Whatever else happens, an attempt ends as `timeout` a
 * second after the longest its timeout allows (the limit under `whole-response`, six times it under
 * `response-headers`).
 *
 * Keep-alive: idle sockets close after `idleSocketTimeoutMs`. A request that fails with
 * ECONNRESET/EPIPE on a reused socket before any byte of an answer came back (almost always the
 * receiver closing that idle socket as Postern picked it, so it never processed the request) is
 * sent once more, on a new socket, within the same attempt and the same `whole-response` deadline
 * (Node's documented `req.reusedSocket` rule). A failure on a new socket, after part of an
 * answer, or on a redirect hop is never repeated. A receiver that drops a connection mid-request
 * without answering looks the same as a closed idle socket and may get that request twice;
 * receivers dedupe on `webhook-id` anyway.
 */
export function createGotTransport(opts: GotTransportOptions): DeliveryTransport {
  // got's per-request native options, built without its 23-KB slow path (got-request-options.ts).
  useLighterNativeRequestOptions();
  const lookupAll = opts.lookupAll ?? createDnsCache().lookupAll;
  const guard = { allowList: opts.allowList, classifyAddress: opts.classifyAddress, lookupAll };
  const pooled = createGuardedAgents({ ...guard, keepAlive: true, idleSocketTimeoutMs: opts.idleSocketTimeoutMs ?? IDLE_SOCKET_TIMEOUT_MS });
  const fresh = createGuardedAgents({ ...guard, keepAlive: false });
  const client = got.extend({
    method: 'POST',
    agent: pooled,
    retry: { limit: 0 },
    throwHttpErrors: false,
    decompress: false,
    hooks: {
      // Every hop is the same signed request (POST, or the method a transformation chose): got turns a 303 into a body-less GET, which a receiver
      // could answer 2xx without ever seeing the event (tourical follows 3xx). The body is the
      // one the previous hop sent (`response.request.options`, not yet replaced by `options`).
      beforeRedirect: [
        (options, response) => {
          Object.assign(options, { method: response.request.options.method, body: response.request.options.body });
          // The endpoint's own headers and credentials go only to its own origin, never to where a redirect points elsewhere.
          const own = (options.context as { originOnlyHeaders?: readonly string[] }).originOnlyHeaders ?? [];
          if (own.length > 0 && new URL(String(options.url)).origin !== new URL(response.url).origin) {
            for (const name of own) delete options.headers[name.toLowerCase()];
          }
        },
      ],
    },
  });
  const proxies = new ProxyAgentCache({ classifyAddress: opts.classifyAddress, lookupAll, idleSocketTimeoutMs: opts.idleSocketTimeoutMs ?? IDLE_SOCKET_TIMEOUT_MS });
  const agentsOf = (request: OutboundRequest, newSocket: boolean) => (request.proxyUrl ? proxies.get(request.proxyUrl) : newSocket ? fresh : pooled);

  return {
    close() {
      for (const agent of [pooled.http, pooled.https, fresh.http, fresh.https]) agent.destroy();
      proxies.close();
    },
    async send(request) {
      const startedAt = performance.now();
      const first = await sendOnce(client, request, request.timeout.ms, opts.classifyAddress, agentsOf(request, false));
      if (first.kind !== 'stale_socket') return first;
      const leftMs = request.timeout.measures === 'whole-response' ? request.timeout.ms - Math.ceil(performance.now() - startedAt) : request.timeout.ms;
      if (leftMs <= 0) return { kind: 'error', code: 'timeout' };
      const second = await sendOnce(client, request, leftMs, opts.classifyAddress, agentsOf(request, true));
      return second.kind === 'stale_socket' ? second.result : second;
    },
  };
}

/** A failure on a reused socket before any answer: safe to send again on a new socket. */
type StaleSocket = { kind: 'stale_socket'; result: TransportResult };

function sendOnce(client: Got, request: OutboundRequest, timeoutMs: number, classifyAddress: (address: string) => string | null, agent: { http: import('node:http').Agent; https: import('node:https').Agent }): Promise<TransportResult | StaleSocket> {
  const wholeResponse = request.timeout.measures === 'whole-response';
  // Without redirects `timeout.request` is already the whole exchange; across hops it restarts.
  const deadline = wholeResponse && request.redirects.follow ? AbortSignal.timeout(timeoutMs) : undefined;
  return new Promise((resolveOnce) => {
    let settled = false;
    // The last resort: whatever got does or fails to do, an attempt ends. `whole-response` ends at
    // its deadline; `response-headers` may spend the limit on each phase (lookup, connect, TLS,
    // send, headers) and once more on a kept body. A second past that, it is a timeout.
    const hardStop = setTimeout(() => finish({ kind: 'error', code: 'timeout' }), (wholeResponse ? 1 : 6) * timeoutMs + 1000);
    hardStop.unref();
    const resolve = (result: TransportResult | StaleSocket) => {
      clearTimeout(hardStop);
      resolveOnce(result);
    };
    const finish = (result: TransportResult | StaleSocket) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      resolve(result);
    };
    const stream = client.stream(request.url, {
      ...(request.method && request.method !== 'POST' ? { method: request.method } : {}),
      body: request.body,
      headers: request.headers,
      followRedirect: request.redirects.follow,
      maxRedirects: request.redirects.follow ? request.redirects.maxHops : 0,
      timeout: wholeResponse ? { request: timeoutMs } : phaseTimeouts(timeoutMs),
      signal: deadline,
      agent,
      context: { originOnlyHeaders: request.originOnlyHeaders ?? [] },
      // The agents pool sockets per certificate and CA (Node's agent name includes them).
      ...(request.clientCertificate ? { https: { certificate: request.clientCertificate.certificate, key: request.clientCertificate.privateKey, ...(request.clientCertificate.ca ? { certificateAuthority: request.clientCertificate.ca } : {}) } } : {}),
    });
    // The first hop's request, and how much its socket had read before it: a reused socket that
    // failed having read nothing more never delivered the request.
    let firstHop: { req: ClientRequest; bytesReadBefore: number | undefined } | undefined;
    stream.once('request', (req: ClientRequest) => {
      const hop = { req, bytesReadBefore: req.socket?.bytesRead };
      firstHop = hop;
      if (hop.bytesReadBefore === undefined) req.once('socket', (socket) => (hop.bytesReadBefore = socket.bytesRead));
    });
    stream.on('error', (err: unknown) => {
      if (deadline?.aborted) return finish({ kind: 'error', code: 'timeout' });
      const result: TransportResult = { kind: 'error', code: classifyNetworkError(err, classifyAddress) };
      finish(firstHop && neverReachedReceiver(firstHop, stream.redirectUrls.length, err) ? { kind: 'stale_socket', result } : result);
    });
    // 101 Switching Protocols: Node hands the socket over ('upgrade', which got passes on) and
    // neither a response nor an error follows. Postern speaks only HTTP, so that is the answer: a
    // non-2xx status (`http_101`), the socket closed.
    stream.on('upgrade', (response: IncomingMessage, socket: Duplex) => {
      socket.destroy();
      const status = response.statusCode ?? 101;
      const keep = keepsResponse(request.keepResponseBody ?? 'none', 'not_2xx');
      const bounded = keep ? boundHeaders(response.headers) : null;
      finish({ kind: 'response', status, retryAfter: undefined, bodyBytesRead: 0, detail: bounded ? { headers: bounded.headers, headersTruncated: bounded.truncated, body: '', bodyTruncated: false } : null });
    });
    stream.on('response', (response: Response) => {
      const retryAfter = headerValue(response.headers['retry-after']);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      const keep = keepsResponse(request.keepResponseBody ?? 'none', ok ? null : 'not_2xx');
      const chunks: Buffer[] = [];
      let bytes = 0;
      const answer = (): TransportResult => {
        const bodyBytesRead = Math.min(bytes, request.maxResponseBytesRead);
        if (!keep) return { kind: 'response', status: response.statusCode, retryAfter, bodyBytesRead, detail: null };
        const bounded = boundHeaders(response.headers);
        const body = Buffer.concat(chunks).subarray(0, request.maxResponseBytesRead).toString('utf8');
        const detail = { headers: bounded.headers, headersTruncated: bounded.truncated, body, bodyTruncated: bytes > request.maxResponseBytesRead };
        return { kind: 'response', status: response.statusCode, retryAfter, bodyBytesRead, detail };
      };
      if (!wholeResponse && !keep) {
        settled = true;
        resolve(answer());
        return drainForReuse(stream, request.maxResponseBytesRead, timeoutMs);
      }
      // An answer whose excerpt is kept is read (≤ maxResponseBytesRead) before the attempt ends,
      // under response-headers too, within one more timeout at most.
      const bodyTimer = wholeResponse ? undefined : setTimeout(() => finish(answer()), timeoutMs);
      bodyTimer?.unref();
      const done = () => {
        if (bodyTimer) clearTimeout(bodyTimer);
        finish(answer());
      };
      stream.on('data', (chunk: Buffer) => {
        if (keep && bytes <= request.maxResponseBytesRead) chunks.push(chunk);
        bytes += chunk.length;
        // The receiver has answered; more of its body changes nothing (vestiarion: read ≤ 1 KB).
        if (bytes > request.maxResponseBytesRead) done();
      });
      stream.on('end', done);
    });
  });
}

/**
 * Reads the rest of an answer the attempt no longer waits for (`response-headers`: settled at the
 * headers), so its socket goes back to the pool instead of being closed: a new connection per
 * request costs Postern and the receiver far more than a short body. More than `maxBytes`, or not
 * done within `timeoutMs`, and the socket is closed as before.
 */
function drainForReuse(stream: ReturnType<Got['stream']>, maxBytes: number, timeoutMs: number): void {
  let bytes = 0;
  const timer = setTimeout(() => stream.destroy(), timeoutMs);
  timer.unref();
  // got's stream does not destroy itself at the end (`autoDestroy: false`), so 'end' is the signal.
  stream.once('end', () => clearTimeout(timer));
  stream.once('error', () => clearTimeout(timer));
  stream.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      clearTimeout(timer);
      stream.destroy();
    }
  });
}

/**
 * True when the first hop failed on a kept-alive socket the receiver had closed: Node's reused
 * socket, ECONNRESET/EPIPE (`socket hang up` included), no redirect followed, no response byte read.
 */
function neverReachedReceiver(hop: { req: ClientRequest; bytesReadBefore: number | undefined }, redirectsFollowed: number, err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  const code = e.cause?.code ?? e.code ?? '';
  const { req } = hop;
  return req.reusedSocket && redirectsFollowed === 0 && STALE_SOCKET_CODES.has(code) && hop.bytesReadBefore !== undefined && req.socket?.bytesRead === hop.bytesReadBefore;
}

function phaseTimeouts(ms: number) {
  return { lookup: ms, connect: ms, secureConnect: ms, send: ms, response: ms };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
