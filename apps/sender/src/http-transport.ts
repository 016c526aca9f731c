import { got, type Response } from 'got';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { Policy } from '@postern/shared';
import { classifyNetworkError } from './network-errors.js';

/** One signed POST to an endpoint, with the policy rules that shape it. */
export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeout: Policy['timeout'];
  redirects: Policy['redirects'];
  /** Read the response until it ends or more than this many bytes arrived, then close it. */
  maxResponseBytesRead: number;
}

/** What came back: a status (any, 3xx included) or an error code from the closed set. */
export type TransportResult =
  | { kind: 'response'; status: number; retryAfter: string | undefined; bodyBytesRead: number }
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
 * The production transport: got through request-filtering-agent, which checks the address every
 * socket actually connects to (each redirect hop and each new keep-alive socket), so a DNS answer
 * that changes between Postern's check and the connection cannot reach a private address.
 *
 * Timeouts (seed 003 vs the others): `whole-response` puts a hard deadline on the whole exchange,
 * redirect hops included; `response-headers` counts from when the request is written until the
 * status line and headers arrive. In that mode each phase before it (DNS lookup, connect, TLS
 * handshake, writing the request) gets the same limit too, so a peer that accepts a connection and
 * then goes silent cannot hold an attempt, and its worker slot, forever.
 *
 * @param opts.allowList addresses/CIDRs allowed despite being private (`ALLOWED_ADDRESSES`)
 * @param opts.classifyAddress names why an address is refused (`loopback`, `private`, …)
 * @param opts.userAgent value of the User-Agent header
 */
export function createGotTransport(opts: {
  allowList: readonly string[];
  classifyAddress: (address: string) => string | null;
}): DeliveryTransport {
  const agentOptions = { keepAlive: true, allowIPAddressList: [...opts.allowList] };
  const agent = { http: new RequestFilteringHttpAgent(agentOptions), https: new RequestFilteringHttpsAgent(agentOptions) };

  return {
    close() {
      agent.http.destroy();
      agent.https.destroy();
    },
    send(request) {
      const wholeResponse = request.timeout.measures === 'whole-response';
      const deadline = wholeResponse ? AbortSignal.timeout(request.timeout.ms) : undefined;
      return new Promise<TransportResult>((resolve) => {
        let settled = false;
        const finish = (result: TransportResult) => {
          if (settled) return;
          settled = true;
          stream.destroy();
          resolve(result);
        };
        const stream = got.stream.post(request.url, {
          body: request.body,
          headers: request.headers,
          agent,
          retry: { limit: 0 },
          throwHttpErrors: false,
          decompress: false,
          followRedirect: request.redirects.follow,
          maxRedirects: request.redirects.follow ? request.redirects.maxHops : 0,
          // Every hop is the same signed POST: got turns a 303 into a body-less GET, which a
          // receiver could answer 2xx without ever seeing the event (seed 002 follows 3xx).
          hooks: { beforeRedirect: [(options) => void Object.assign(options, { method: 'POST', body: request.body })] },
          timeout: wholeResponse ? { request: request.timeout.ms } : phaseTimeouts(request.timeout.ms),
          signal: deadline,
        });
        stream.on('error', (err: unknown) => {
          if (deadline?.aborted) return finish({ kind: 'error', code: 'timeout' });
          finish({ kind: 'error', code: classifyNetworkError(err, opts.classifyAddress) });
        });
        stream.on('response', (response: Response) => {
          const retryAfter = headerValue(response.headers['retry-after']);
          const answer = (bodyBytesRead: number): TransportResult => ({ kind: 'response', status: response.statusCode, retryAfter, bodyBytesRead });
          if (!wholeResponse) return finish(answer(0));
          let bytes = 0;
          stream.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            // The receiver has answered; more of its body changes nothing (seed 004: read ≤ 1 KB).
            if (bytes > request.maxResponseBytesRead) finish(answer(Math.min(bytes, request.maxResponseBytesRead)));
          });
          stream.on('end', () => finish(answer(bytes)));
        });
      });
    },
  };
}

function phaseTimeouts(ms: number) {
  return { lookup: ms, connect: ms, secureConnect: ms, send: ms, response: ms };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
