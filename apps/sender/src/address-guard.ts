import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { isIP, Socket, type LookupFunction, type TcpNetConnectOpts } from 'node:net';
import type { Duplex } from 'node:stream';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { LookupAll } from './destination-check.js';

/** `code` of the error a socket fails with when the guard refuses the address it would dial. */
export const UNSAFE_ADDRESS_CODE = 'ERR_POSTERN_UNSAFE_ADDRESS';

/** The error the guard fails a connection with: `code` {@link UNSAFE_ADDRESS_CODE}, `reason` as `classifyAddress` gave it. */
export interface UnsafeAddressError extends Error {
  code: typeof UNSAFE_ADDRESS_CODE;
  /** e.g. `loopback`, `private`, `ipv4_compatible`: recorded as `unsafe_url:<reason>`. */
  reason: string;
}

function unsafeAddressError(reason: string): UnsafeAddressError {
  // The address itself stays out of the message: messages end up in logs.
  return Object.assign(new Error(`destination address refused: ${reason}`), { code: UNSAFE_ADDRESS_CODE, reason } as const);
}

/**
 * The reason of a guard refusal, looked for in `err` and its `cause` (got wraps the socket's
 * error), or null when `err` is something else.
 */
export function unsafeAddressReason(err: unknown): string | null {
  for (let e = err as { code?: unknown; reason?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (e.code === UNSAFE_ADDRESS_CODE && typeof e.reason === 'string') return e.reason;
  }
  return null;
}

/**
 * A `lookup` for `net.connect` that answers from `lookupAll` and refuses the whole answer when
 * `classifyAddress` refuses any address in it, exactly as the pre-send `checkDestination` does
 * with the same answer, so both give the same reason. It always reads every address, whatever
 * `options.all` asks, and then filters by `options.family`.
 *
 * @param lookupAll every address of a host name (the shared DNS cache in production)
 * @param classifyAddress Postern's rule with the allow-list applied (`classifyAddress` of
 *   `@postern/shared`): null = allowed, else the reason
 * @returns a callback lookup; errors are {@link UnsafeAddressError}, `lookupAll`'s own error, or
 *   `ENOTFOUND` when no address of the asked family is left
 */
export function guardedLookup(lookupAll: LookupAll, classifyAddress: (address: string) => string | null): LookupFunction {
  return (hostname, options, callback) => {
    lookupAll(hostname).then(
      (addresses) => {
        for (const address of addresses) {
          const reason = classifyAddress(address);
          if (reason) return callback(unsafeAddressError(reason), '', 0);
        }
        const wanted = familyNumber(options.family);
        const usable = addresses.map((address) => ({ address, family: isIP(address) })).filter((a) => a.family !== 0 && (wanted === 0 || a.family === wanted));
        const first = usable[0];
        if (!first) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }), '', 0);
        // @types/node types the callback for one address only; with `all` net expects the list.
        if (options.all) return (callback as unknown as (err: null, all: typeof usable) => void)(null, usable);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

function familyNumber(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

/** Options of {@link createGuardedAgents}. */
export interface GuardedAgentOptions {
  /** Addresses/CIDRs allowed although not public (`ALLOWED_ADDRESSES`), canonical (`parseAllowList`). */
  allowList: readonly string[];
  /** Postern's rule with `allowList` applied; the one `checkDestination` uses. */
  classifyAddress: (address: string) => string | null;
  /** Every address of a host name; share it with `checkDestination` so one answer serves both. */
  lookupAll: LookupAll;
  /** Keep sockets open between requests. */
  keepAlive: boolean;
  /**
   * With `keepAlive`: an idle socket is closed after this many ms (Node's agent `timeout`, which
   * it shortens further to a receiver's `Keep-Alive: timeout=N` hint minus 1 s). Below common
   * receivers' keep-alive timeouts (Node's http server: 5 s) so Postern closes first.
   */
  idleSocketTimeoutMs?: number;
}

/**
 * The agents every outbound socket comes from. Each new connection (first hop, every redirect
 * hop, every new keep-alive socket) is checked where it is made:
 * - a host that is an IP address is classified before any socket is opened;
 * - a host name is resolved through {@link guardedLookup}, which classifies every address in the
 *   answer before net may dial one of them.
 * So the connect-time check refuses exactly what the pre-send check refuses (Postern's
 * `classifyAddress` and allow-list: `::7f00:1` is `ipv4_compatible` here, although ipaddr.js
 * calls it unicast). request-filtering-agent, which these agents extend, still applies its own
 * "unicast only" test after Postern's, as a second line.
 */
export function createGuardedAgents(options: GuardedAgentOptions): { http: HttpAgent; https: HttpsAgent } {
  const guard: Guard = { lookup: guardedLookup(options.lookupAll, options.classifyAddress), classifyAddress: options.classifyAddress };
  const agentOptions = {
    keepAlive: options.keepAlive,
    ...(options.keepAlive && options.idleSocketTimeoutMs !== undefined ? { timeout: options.idleSocketTimeoutMs } : {}),
    allowIPAddressList: [...options.allowList],
  };
  return { http: new GuardedHttpAgent(agentOptions, guard), https: new GuardedHttpsAgent(agentOptions, guard) };
}

interface Guard {
  lookup: LookupFunction;
  classifyAddress: (address: string) => string | null;
}

type ConnectionListener = (error: Error | null, socket: Duplex) => void;

/** The refusal of a host that is an IP address (net dials those without a lookup), else null. */
function refuseLiteral(guard: Guard, host: string | undefined): UnsafeAddressError | null {
  if (host === undefined || isIP(host) === 0) return null;
  const reason = guard.classifyAddress(host);
  return reason ? unsafeAddressError(reason) : null;
}

/** A socket that never connects and fails with `error` (the shape http.Agent expects back). */
function refusedSocket(error: Error, listener: ConnectionListener | undefined): Socket {
  const socket = new Socket();
  if (listener) listener(error, socket);
  else process.nextTick(() => socket.destroy(error));
  return socket;
}

class GuardedHttpAgent extends RequestFilteringHttpAgent {
  readonly #guard: Guard;
  constructor(options: ConstructorParameters<typeof RequestFilteringHttpAgent>[0], guard: Guard) {
    super(options);
    this.#guard = guard;
  }
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener): Duplex | Socket {
    const refused = refuseLiteral(this.#guard, options.host);
    return refused ? refusedSocket(refused, listener) : super.createConnection({ ...options, lookup: this.#guard.lookup }, listener);
  }
}

class GuardedHttpsAgent extends RequestFilteringHttpsAgent {
  readonly #guard: Guard;
  constructor(options: ConstructorParameters<typeof RequestFilteringHttpsAgent>[0], guard: Guard) {
    super(options);
    this.#guard = guard;
  }
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener): Duplex | Socket {
    const refused = refuseLiteral(this.#guard, options.host);
    return refused ? refusedSocket(refused, listener) : super.createConnection({ ...options, lookup: this.#guard.lookup }, listener);
  }
}
