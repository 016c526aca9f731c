import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Prefix every endpoint secret carries (Standard Webhooks). */
export const SECRET_PREFIX = 'whsec_';
/** Fewest key bytes a secret may decode to (Standard Webhooks: 24). */
export const MIN_SECRET_BYTES = 24;
/** Most key bytes a secret may decode to (Standard Webhooks: 64). */
export const MAX_SECRET_BYTES = 64;
/** Default accepted clock skew for {@link verify}, seconds (Standard Webhooks' 5 minutes). */
export const DEFAULT_TOLERANCE_S = 300;

/** Why a secret was refused; see {@link InvalidSecretError}. */
export type InvalidSecretReason = 'missing_prefix' | 'not_base64' | 'too_short' | 'too_long';

/**
 * Thrown by {@link parseSecret} (and everything that signs) for a secret that
 * is not `whsec_` + canonical base64 of 24 to 64 bytes.
 */
export class InvalidSecretError extends Error {
  /** Machine-readable cause, safe to return in an API error. */
  readonly reason: InvalidSecretReason;

  constructor(reason: InvalidSecretReason) {
    super(`invalid webhook secret: ${reason.replace(/_/g, ' ')} (expected ${SECRET_PREFIX} + base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes)`);
    this.name = 'InvalidSecretError';
    this.reason = reason;
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Makes a new endpoint secret from the system's secure random source.
 *
 * @param bytes - key length in bytes, integer 24..64, default 32.
 * @returns `whsec_` + standard base64 (with padding) of the key.
 * @throws RangeError when `bytes` is outside 24..64.
 */
export function generateSecret(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
    throw new RangeError(`bytes must be an integer from ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES}`);
  }
  return SECRET_PREFIX + randomBytes(bytes).toString('base64');
}

/**
 * Decodes a secret to its HMAC key bytes (Standard Webhooks: the key is the
 * decoded bytes, not the string).
 *
 * @param secret - `whsec_` + standard, padded base64.
 * @returns the key, 24..64 bytes.
 * @throws InvalidSecretError with `reason` `missing_prefix`, `not_base64`,
 *   `too_short` or `too_long`.
 */
export function parseSecret(secret: string): Buffer {
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
    throw new InvalidSecretError('missing_prefix');
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (encoded.length === 0 || !BASE64.test(encoded)) throw new InvalidSecretError('not_base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES) throw new InvalidSecretError('too_short');
  if (key.length > MAX_SECRET_BYTES) throw new InvalidSecretError('too_long');
  return key;
}

/**
 * Whether {@link parseSecret} would accept `secret`.
 *
 * @param secret - candidate secret.
 */
export function isValidSecret(secret: string): boolean {
  try {
    parseSecret(secret);
    return true;
  } catch {
    return false;
  }
}

/** The signed content of one request. */
export interface SignInput {
  /** Endpoint secret, `whsec_…`. */
  secret: string;
  /** The `webhook-id` header: the event id. */
  msgId: string;
  /** The `webhook-timestamp` header, Unix epoch seconds (integer). */
  timestampS: number;
  /** The exact body sent (the envelope). */
  body: string;
}

function checkTimestamp(timestampS: number): void {
  if (!Number.isSafeInteger(timestampS) || timestampS < 0) {
    throw new RangeError(`timestampS must be a non-negative integer number of seconds, got ${timestampS}`);
  }
}

function hmacBase64(key: Buffer, msgId: string, timestampS: number, body: string): string {
  return createHmac('sha256', key).update(`${msgId}.${timestampS}.${body}`, 'utf8').digest('base64');
}

/**
 * One Standard Webhooks signature: HMAC-SHA256, keyed with the decoded
 * secret, over `<msgId>.<timestampS>.<body>` (UTF-8).
 *
 * @returns `v1,<base64 signature>`.
 * @throws InvalidSecretError for a malformed secret; RangeError when
 *   `timestampS` is not a non-negative integer.
 */
export function sign({ secret, msgId, timestampS, body }: SignInput): string {
  checkTimestamp(timestampS);
  return `v1,${hmacBase64(parseSecret(secret), msgId, timestampS, body)}`;
}

/** Input of {@link signatureHeader}: {@link SignInput} with every secret still valid. */
export interface SignatureHeaderInput {
  /** Current secret first, then any rotated-out secrets still in their grace period; at least one. */
  secrets: readonly string[];
  msgId: string;
  timestampS: number;
  body: string;
}

/**
 * The `webhook-signature` header value: one `v1,…` signature per secret,
 * space-separated, so a receiver that still has the previous secret keeps
 * verifying during a rotation (Standard Webhooks). Repeated secrets are
 * signed once.
 *
 * @throws RangeError when `secrets` is empty or `timestampS` is invalid;
 *   InvalidSecretError for a malformed secret.
 */
export function signatureHeader({ secrets, msgId, timestampS, body }: SignatureHeaderInput): string {
  if (secrets.length === 0) throw new RangeError('signatureHeader needs at least one secret');
  return [...new Set(secrets)].map((secret) => sign({ secret, msgId, timestampS, body })).join(' ');
}

/** Input of {@link verify}. */
export interface VerifyInput extends SignInput {
  /** The received `webhook-signature` header (one or more space-separated `v1,…`). */
  header: string;
  /** The receiver's clock, Unix epoch seconds. */
  nowS: number;
  /** Accepted skew either way, seconds; default 300. */
  toleranceS?: number;
}

/**
 * Receiver-side check, for tests and demo receivers: true when the timestamp
 * is within `toleranceS` of `nowS` and any `v1` signature in `header` matches
 * (constant-time comparison). Other versions in the header are ignored.
 *
 * @throws InvalidSecretError for a malformed secret (a configuration error,
 *   not a bad request).
 */
export function verify({ secret, msgId, timestampS, body, header, nowS, toleranceS = DEFAULT_TOLERANCE_S }: VerifyInput): boolean {
  const key = parseSecret(secret);
  if (!Number.isSafeInteger(timestampS) || timestampS < 0) return false;
  if (Math.abs(nowS - timestampS) > toleranceS) return false;
  const expected = Buffer.from(hmacBase64(key, msgId, timestampS, body), 'utf8');
  let matched = false;
  for (const part of header.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(part.slice(comma + 1), 'utf8');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}
