import type { RequestSecrets, RequestSettings, SecretBox } from '@postern/shared';
import { openSealedField, sealField } from './sealed-fields.js';

/**
 * The one seam every secret of an endpoint's request settings passes through on its way into and
 * out of Redis: the endpoint hash field `requestSecrets` (secret header values, auth password,
 * token, client secret, mTLS private key, proxy password) and the cached OAuth 2.0 token
 * (`endpointOauthToken` key). Both are written only by {@link encodeSecretValue} and read only
 * by {@link decodeSecretValue}: JSON, sealed with the store's {@link SecretBox} for the record and
 * field named (`sealed-fields.ts`).
 */
export function encodeSecretValue(value: unknown, box: SecretBox, orgId: string, recordId: string, field: string): string {
  return sealField(box, JSON.stringify(value), orgId, recordId, field);
}

/** Reads what {@link encodeSecretValue} wrote; null when absent, unreadable or sealed with a key this process lacks. */
export function decodeSecretValue<T>(raw: string | undefined | null, box: SecretBox, orgId: string, recordId: string, field: string): T | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const plain = openSealedField(box, raw, orgId, recordId, field);
  if (plain === null) return null;
  try {
    return JSON.parse(plain) as T;
  } catch {
    return null;
  }
}

/** The endpoint hash field `requestSecrets`, through the seam; `''` (field cleared) for none. */
export function encodeRequestSecrets(secrets: RequestSecrets | null | undefined, box: SecretBox, orgId: string, endpointId: string): string {
  return secrets && Object.keys(secrets).length > 0 ? encodeSecretValue(secrets, box, orgId, endpointId, 'requestSecrets') : '';
}

/** The endpoint hash field `requestSecrets` read back; `{}` when absent or unreadable. */
export function decodeRequestSecrets(raw: string | undefined, box: SecretBox, orgId: string, endpointId: string): RequestSecrets {
  const value = decodeSecretValue<RequestSecrets>(raw, box, orgId, endpointId, 'requestSecrets');
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
