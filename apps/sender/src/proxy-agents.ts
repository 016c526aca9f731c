import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';
import { guardedLookup, unsafeAddressReason } from './address-guard.js';
import type { LookupAll } from './destination-check.js';

/**
 * Agents that reach receivers through an egress proxy (hpagent): every request, http:// or
 * https://, goes through a CONNECT tunnel to the proxy, which dials the receiver; TLS to an
 * https:// receiver runs inside the tunnel, so a client certificate still reaches the receiver.
 *
 * How this composes with the address rules: the proxy resolves and dials the receiver, so the
 * connect-time guard cannot see that address; the sender's pre-send check (`checkDestination`)
 * has already resolved and classified the receiver's host before any request, so a refused
 * target never reaches the proxy. The connection to the proxy itself goes through
 * {@link guardedLookup} (and a literal address is classified first): a private proxy address must
 * be in `ALLOWED_ADDRESSES`.
 *
 * A failure on the way to the receiver (proxy unreachable, tunnel refused, timed out, its address
 * refused) is marked so that `classifyNetworkError` records `proxy_error:<code>`.
 */

/** Marker on an error raised before the tunnel to the receiver was open. */
export interface ProxyStageError extends Error {
  posternProxyStage: true;
  /** The `proxy_error:` detail: an errno code, `status_<n>`, `timeout`, `unsafe_address_<reason>`. */
  proxyCode: string;
}

function proxyStageError(err: Error): ProxyStageError {
  const unsafe = unsafeAddressReason(err);
  const status = /^Bad response: (\d{3})$/.exec(err.message);
  const code = unsafe
    ? `unsafe_address_${unsafe}`
    : status
      ? `status_${status[1]}`
      : err.message === 'Proxy timeout'
        ? 'timeout'
        : /^[A-Za-z0-9_]+$/.test(String((err as NodeJS.ErrnoException).code ?? ''))
          ? String((err as NodeJS.ErrnoException).code)
          : 'failed';
  return Object.assign(new Error(`egress proxy: ${code}`), { posternProxyStage: true as const, proxyCode: code, code: 'ERR_POSTERN_PROXY' });
}

/** The `proxy_error:` detail of an error from a proxied request (looked for in its causes), or null. */
export function proxyErrorCode(err: unknown): string | null {
  for (let e = err as { posternProxyStage?: unknown; proxyCode?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.posternProxyStage === true && typeof e.proxyCode === 'string') return e.proxyCode;
  }
  return null;
}

type Callback = (err: Error | null, socket?: Duplex | null) => void;

/** Options of {@link createProxyAgents}. */
export interface ProxyAgentOptions {
  /** `http://` or `https://` proxy, with `user:password@` when it needs credentials (sent as Basic Proxy-Authorization). */
  proxyUrl: string;
  classifyAddress: (address: string) => string | null;
  lookupAll: LookupAll;
  /** Idle keep-alive sockets close after this, ms. */
  idleSocketTimeoutMs: number;
}

/** An http and an https agent through one proxy, guarded as described above. */
export function createProxyAgents(options: ProxyAgentOptions): { http: HttpAgent; https: HttpsAgent } {
  const proxy = new URL(options.proxyUrl);
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  const literalReason = isIP(host) !== 0 ? options.classifyAddress(host) : null;
  const common = {
    proxy,
    keepAlive: true,
    timeout: options.idleSocketTimeoutMs,
    // hpagent passes these to the CONNECT request: its socket resolves the proxy through the guard.
    proxyRequestOptions: { lookup: guardedLookup(options.lookupAll, options.classifyAddress) } as object,
  };
  const wrap = (createConnection: (opts: unknown, cb: Callback) => void) => (opts: unknown, cb: Callback) => {
    if (literalReason) return process.nextTick(() => cb(proxyStageError(Object.assign(new Error('refused'), { code: 'ERR_POSTERN_UNSAFE_ADDRESS', reason: literalReason }))));
    createConnection(opts, (err, socket) => (err ? cb(proxyStageError(err)) : cb(null, socket)));
  };
  const http = new HttpProxyAgent(common);
  const https = new HttpsProxyAgent(common);
  for (const agent of [http, https] as unknown as { createConnection: (opts: unknown, cb: Callback) => void }[]) {
    agent.createConnection = wrap(agent.createConnection.bind(agent));
  }
  return { http, https };
}

/** Most proxies whose agents a transport keeps at once; the least recently used is closed past it. */
export const MAX_PROXY_AGENTS = 64;

/** Proxy agents by proxy URL (credentials included), the least recently used closed past {@link MAX_PROXY_AGENTS}. */
export class ProxyAgentCache {
  readonly #agents = new Map<string, { http: HttpAgent; https: HttpsAgent }>();
  constructor(private readonly options: Omit<ProxyAgentOptions, 'proxyUrl'>) {}

  get(proxyUrl: string): { http: HttpAgent; https: HttpsAgent } {
    let agents = this.#agents.get(proxyUrl);
    if (agents) this.#agents.delete(proxyUrl);
    else agents = createProxyAgents({ ...this.options, proxyUrl });
    this.#agents.set(proxyUrl, agents);
    if (this.#agents.size > MAX_PROXY_AGENTS) {
      const [oldest, evicted] = this.#agents.entries().next().value as [string, { http: HttpAgent; https: HttpsAgent }];
      this.#agents.delete(oldest);
      evicted.http.destroy();
      evicted.https.destroy();
    }
    return agents;
  }

  close(): void {
    for (const agents of this.#agents.values()) {
      agents.http.destroy();
      agents.https.destroy();
    }
    this.#agents.clear();
  }
}
