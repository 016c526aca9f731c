import { basicAuthorization, type RequestSecrets, type RequestSettings } from '@postern/shared';
import type { ClientCertificate } from './http-transport.js';
import type { OauthTokens } from './oauth-tokens.js';

/**
 * How one attempt authenticates, from the endpoint's `auth` and its secrets: the `authorization`
 * header value (basic, bearer, OAuth 2.0), the client certificate (mTLS), and for OAuth 2.0 the
 * token's stored form (so a 401 drops exactly that token) and whether this attempt fetched it.
 */
export type AttemptAuth =
  | { kind: 'ready'; authorization: string | null; clientCertificate: ClientCertificate | null; oauth: { stored: string | null; fetched: boolean } | null }
  | { kind: 'failed'; reason: string };

/**
 * The auth of one attempt. Only OAuth 2.0 does I/O (the token, cached for every sender); its
 * failures are `failed` with the token reason (`token_http_<status>`, `token_timeout`,
 * `token_bad_answer`, …), recorded as `auth_failed:<reason>`. A secret missing from the store
 * (never written, or unreadable) is `failed` too, with `secret_missing` (recorded as
 * `internal:secret_unreadable`: Postern's fault, never held against the endpoint).
 *
 * @param refused the stored form of a token the receiver just refused (401): dropped and refetched
 */
export async function attemptAuth(
  tokens: OauthTokens | undefined,
  ids: { orgId: string; endpointId: string },
  settings: RequestSettings,
  secrets: RequestSecrets,
  refused: string | null = null,
): Promise<AttemptAuth> {
  const auth = settings.auth;
  const none = { authorization: null, clientCertificate: null, oauth: null };
  if (auth === null) return { kind: 'ready', ...none };
  switch (auth.type) {
    case 'basic':
      return secrets.password === undefined ? { kind: 'failed', reason: 'secret_missing' } : { kind: 'ready', ...none, authorization: basicAuthorization(auth.username, secrets.password) };
    case 'bearer':
      return secrets.token === undefined ? { kind: 'failed', reason: 'secret_missing' } : { kind: 'ready', ...none, authorization: `Bearer ${secrets.token}` };
    case 'mtls':
      return secrets.privateKey === undefined
        ? { kind: 'failed', reason: 'secret_missing' }
        : { kind: 'ready', ...none, clientCertificate: { certificate: auth.certificate, privateKey: secrets.privateKey, ca: auth.ca } };
    case 'oauth2_client_credentials': {
      if (secrets.clientSecret === undefined || !tokens) return { kind: 'failed', reason: 'secret_missing' };
      const token = await tokens.token(ids, auth, secrets.clientSecret, refused);
      if (token.kind === 'error') return { kind: 'failed', reason: token.reason };
      return { kind: 'ready', ...none, authorization: `Bearer ${token.accessToken}`, oauth: { stored: token.stored, fetched: token.fetched } };
    }
  }
}
