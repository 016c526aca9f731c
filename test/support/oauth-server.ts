import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One token request the test token server got. */
export interface TokenRequest {
  /** The form fields (grant_type, scope, …). */
  form: Record<string, string>;
  /** The client id and secret of its HTTP Basic client authentication, or null. */
  basic: { clientId: string; clientSecret: string } | null;
}

/**
 * A small OAuth 2.0 token endpoint (RFC 6749 §4.4) on 127.0.0.1:0 for tests: it checks the
 * client credentials (HTTP Basic, or `client_id`/`client_secret` form fields), answers
 * `{access_token, token_type: "Bearer", expires_in}` with a new token each time, and can revoke a
 * token, stop (its port closed: a token endpoint that is down) and start again on the same port.
 */
export interface TokenServer {
  tokenUrl: string;
  /** Every token request, valid or not. */
  requests: TokenRequest[];
  /** Tokens issued, oldest first. */
  issued: string[];
  /** Whether a receiver should accept `token`: issued, not revoked, not past its lifetime. */
  isValid(token: string): boolean;
  revoke(token: string): void;
  /** Lifetime of the tokens issued from now on, s. */
  expiresInS: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startTokenServer(opts: { clientId: string; clientSecret: string; expiresInS?: number }): Promise<TokenServer> {
  const requests: TokenRequest[] = [];
  const issued: string[] = [];
  const expiry = new Map<string, number>();
  const revoked = new Set<string>();
  const sockets = new Set<Socket>();
  let port = 0;
  const state = { expiresInS: opts.expiresInS ?? 3600 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const header = req.headers.authorization ?? '';
      let basic: TokenRequest['basic'] = null;
      if (header.startsWith('Basic ')) {
        const [id = '', secret = ''] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
        const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
        basic = { clientId: dec(id), clientSecret: dec(secret) };
      }
      requests.push({ form, basic });
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/token') return json(404, { error: 'not_found' });
      if (form.grant_type !== 'client_credentials') return json(400, { error: 'unsupported_grant_type' });
      const clientId = basic?.clientId ?? form.client_id;
      const clientSecret = basic?.clientSecret ?? form.client_secret;
      if (clientId !== opts.clientId || clientSecret !== opts.clientSecret) return json(401, { error: 'invalid_client' });
      const token = `tok_${issued.length + 1}_${Math.random().toString(36).slice(2)}`;
      issued.push(token);
      expiry.set(token, Date.now() + state.expiresInS * 1000);
      json(200, { access_token: token, token_type: 'Bearer', expires_in: state.expiresInS });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const listen = () => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      port = (server.address() as AddressInfo).port;
      resolve();
    });
  });
  const stop = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen();
  return {
    tokenUrl: `http://127.0.0.1:${port}/token`,
    requests,
    issued,
    isValid: (token) => expiry.has(token) && !revoked.has(token) && (expiry.get(token) ?? 0) > Date.now(),
    revoke: (token) => void revoked.add(token),
    get expiresInS() {
      return state.expiresInS;
    },
    set expiresInS(s: number) {
      state.expiresInS = s;
    },
    stop,
    start: listen,
    close: async () => {
      if (server.listening) await stop();
    },
  };
}
