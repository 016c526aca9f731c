import { randomUUID } from 'node:crypto';
import { got } from 'got';
import { clientSecretBasic, parseTokenAnswer, tokenCacheTtlMs, tokenRequestForm, validateEndpointUrl, type AuthSettings } from '@postern/shared';
import type { OauthTokenRepository } from '@postern/store';
import { createGuardedAgents } from './address-guard.js';
import { checkDestination, systemLookupAll, type LookupAll } from './destination-check.js';
import { classifyNetworkError } from './network-errors.js';

/** The `oauth2_client_credentials` auth of an endpoint. */
export type OauthAuth = Extract<AuthSettings, { type: 'oauth2_client_credentials' }>;

/** A token to send, and its stored form (to drop exactly it when the receiver refuses it). */
export type TokenResult = { kind: 'token'; accessToken: string; stored: string | null; fetched: boolean } | { kind: 'error'; reason: string };

/** A token endpoint must answer within this, ms. */
export const TOKEN_REQUEST_TIMEOUT_MS = 10_000;
/** How long a failed fetch is remembered, ms: the attempts waiting on it fail with its reason rather than each asking again. */
export const TOKEN_FAILURE_TTL_MS = 1_000;
/** How often a process waiting on another's fetch looks for its token, ms. */
const WAIT_POLL_MS = 20;
/** Most bytes of a token endpoint's answer read. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** What {@link createOauthTokens} needs. */
export interface OauthTokenDeps {
  tokens: OauthTokenRepository;
  classifyAddress: (address: string) => string | null;
  allowList: readonly string[];
  lookupAll?: LookupAll;
  /** Default {@link TOKEN_REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Told of each request to a token endpoint (metrics, tests). */
  onFetch?: (endpointId: string) => void;
  /**
   * Told of each fetch's outcome, once per fetch (not per attempt served from the cache):
   * `result` is `ok` or the failure reason (`token_http_500`, `token_timeout`, …; unbounded
   * details included, so a metric must bound it: `tokenFetchLabel`).
   */
  onFetched?: (fetch: { endpointId: string; result: string }) => void;
  /** When a token was fetched (`oauthTokenFetchedAt`); default the system clock. */
  clock?: { now(): number };
}

/** Every endpoint's OAuth 2.0 client-credentials token, for one sender process. */
export interface OauthTokens {
  /**
   * The endpoint's token: the one cached in Redis (shared by every sender), else fetched by
   * exactly one process at a time (a short Redis lock) while the others wait for it.
   * `refused` is the stored form of a token the receiver just answered 401 to: it is dropped
   * first (only if still cached), so one refusal leads to one new fetch however many attempts saw it.
   */
  token(ids: { orgId: string; endpointId: string }, auth: OauthAuth, clientSecret: string, refused?: string | null): Promise<TokenResult>;
  close(): void;
}

/**
 * Client-credentials tokens (RFC 6749 §4.4): a form POST of `grant_type=client_credentials` to the
 * token URL, client authentication by HTTP Basic (`client_secret_basic`, the default) or form
 * fields (`client_secret_post`). The token URL passes the same address rules as endpoint URLs:
 * the pre-send check, then the connect-time guard. Tokens are cached until `expires_in` less a
 * margin (`tokenCacheTtlMs`); a failure is `token_http_<status>`, `token_timeout`,
 * `token_bad_answer` or `token_<network code>` (recorded as `auth_failed:<reason>`). A
 * successful fetch is recorded on the endpoint (`oauthTokenFetchedAt`, epoch ms).
 */
export function createOauthTokens(deps: OauthTokenDeps): OauthTokens {
  const timeoutMs = deps.timeoutMs ?? TOKEN_REQUEST_TIMEOUT_MS;
  const agents = createGuardedAgents({ allowList: deps.allowList, classifyAddress: deps.classifyAddress, lookupAll: deps.lookupAll ?? systemLookupAll, keepAlive: false });
  const client = got.extend({ method: 'POST', agent: agents, retry: { limit: 0 }, throwHttpErrors: false, followRedirect: false, decompress: false, timeout: { request: timeoutMs } });
  const holder = randomUUID();
  const clock = deps.clock ?? { now: () => Date.now() };

  async function fetchToken(endpointId: string, auth: OauthAuth, clientSecret: string): Promise<{ ok: true; accessToken: string; expiresInS: number } | { ok: false; reason: string }> {
    const parsed = validateEndpointUrl(auth.tokenUrl);
    if (!parsed.ok) return { ok: false, reason: 'token_bad_url' };
    const refused = await checkDestination(parsed.url, deps.classifyAddress, deps.lookupAll);
    if (refused) return { ok: false, reason: `token_${refused.replace(':', '_')}` };
    deps.onFetch?.(endpointId);
    try {
      const response = await client(parsed.url, {
        body: tokenRequestForm(auth, clientSecret),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          ...(auth.clientAuthentication === 'client_secret_basic' ? { authorization: clientSecretBasic(auth.clientId, clientSecret) } : {}),
        },
      });
      const body = response.rawBody.subarray(0, MAX_TOKEN_ANSWER_BYTES).toString('utf8');
      return parseTokenAnswer(response.statusCode, body);
    } catch (err) {
      const code = classifyNetworkError(err, deps.classifyAddress);
      return { ok: false, reason: code === 'timeout' ? 'token_timeout' : `token_${code.replace(':', '_')}` };
    }
  }

  return {
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
    async token(ids, auth, clientSecret, refused) {
      const { orgId, endpointId } = ids;
      if (refused) await deps.tokens.dropIf(orgId, endpointId, refused);
      // The lock outlives one fetch; past the deadline a waiter gives up as a timeout would.
      const lockMs = timeoutMs + 2_000;
      const deadline = Date.now() + lockMs + timeoutMs;
      for (;;) {
        const cached = await deps.tokens.read(orgId, endpointId);
        if (cached) {
          if ('token' in cached.value) return { kind: 'token', accessToken: cached.value.token, stored: cached.stored, fetched: false };
          return { kind: 'error', reason: cached.value.failure };
        }
        if (await deps.tokens.lock(orgId, endpointId, holder, lockMs)) {
          try {
            // Another process may have cached one between the read and the lock.
            const again = await deps.tokens.read(orgId, endpointId);
            if (again && 'token' in again.value) return { kind: 'token', accessToken: again.value.token, stored: again.stored, fetched: false };
            const answer = await fetchToken(endpointId, auth, clientSecret);
            deps.onFetched?.({ endpointId, result: answer.ok ? 'ok' : answer.reason });
            if (!answer.ok) {
              await deps.tokens.write(orgId, endpointId, { failure: answer.reason }, TOKEN_FAILURE_TTL_MS);
              return { kind: 'error', reason: answer.reason };
            }
            await deps.tokens.write(orgId, endpointId, { token: answer.accessToken }, tokenCacheTtlMs(answer.expiresInS));
            // Only on a fetch, so the endpoint page can say when the last token came (one HSET per token lifetime).
            await deps.tokens.recordFetched(orgId, endpointId, clock.now());
            const stored = await deps.tokens.read(orgId, endpointId);
            return { kind: 'token', accessToken: answer.accessToken, stored: stored?.stored ?? null, fetched: true };
          } finally {
            await deps.tokens.unlock(orgId, endpointId, holder);
          }
        }
        if (Date.now() > deadline) return { kind: 'error', reason: 'token_timeout' };
        await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
      }
    },
  };
}
