import type { RequestSecrets, RequestSettings } from '@postern/shared';

/**
 * The one seam every secret of an endpoint's request settings passes through on its way into and
 * out of Redis: the endpoint hash field `requestSecrets` (secret header values, auth password,
 * token, client secret, mTLS private key, proxy password) and the cached OAuth 2.0 token
 * (`endpointOauthToken` key). Both are written only by {@link encodeSecretValue} and read only
 * by {@link decodeSecretValue}, so sealing them at rest is a change to these two functions alone.
 * Today they store JSON as it is.
 */
export function encodeSecretValue(value: unknown): string {
  return JSON.stringify(value);
}

/** Reads what {@link encodeSecretValue} wrote; null when absent or unreadable. */
export function decodeSecretValue<T>(raw: string | undefined | null): T | null {
  if (raw === undefined || raw === null || raw === '') return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

/** The endpoint hash field `requestSecrets`, through the seam; `''` (field cleared) for none. */
export function encodeRequestSecrets(secrets: RequestSecrets | null | undefined): string {
  return secrets && Object.keys(secrets).length > 0 ? encodeSecretValue(secrets) : '';
}

/** The endpoint hash field `requestSecrets` read back; `{}` when absent or unreadable. */
export function decodeRequestSecrets(raw: string | undefined): RequestSecrets {
  const value = decodeSecretValue<RequestSecrets>(raw);
  return value && typeof value === 'object' ? value : {};
}

/** The endpoint hash field `request` (not secret): the settings, or null when absent or unreadable. */
export function parseRequestSettings(raw: string | undefined): RequestSettings | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as RequestSettings;
    return value && Array.isArray(value.headers) ? value : null;
  } catch {
    return null;
  }
}
