import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign as cryptoSign, timingSafeEqual, verify as cryptoVerify, type KeyObject } from 'node:crypto';

/** Prefix of an HMAC-SHA256 endpoint secret (Standard Webhooks, symmetric scheme). */
export const SECRET_PREFIX = 'whsec_';
/** Fewest key bytes a secret may decode to (Standard Webhooks: 24). */
export const MIN_SECRET_BYTES = 24;
/** Most key bytes a secret may decode to (Standard Webhooks: 64). */
export const MAX_SECRET_BYTES = 64;
/** Default accepted clock skew for {@link verify}, seconds (Standard Webhooks' 5 minutes). */
export const DEFAULT_TOLERANCE_S = 300;

/** Prefix of an Ed25519 secret key (Standard Webhooks, asymmetric scheme). */
export const ED25519_SECRET_PREFIX = 'whsk_';
/** Prefix of an Ed25519 public key (Standard Webhooks, asymmetric scheme). */
export const ED25519_PUBLIC_KEY_PREFIX = 'whpk_';
/**
 * Bytes a `whsk_` secret decodes to: the 32-byte Ed25519 seed followed by the 32-byte public key,
 * the layout svix-server uses (svix/svix-webhooks README, "Configuring the keys":
 * `whsk_${base64(private_key + public_key)}`); the specification says only "standard ed25519 key pair".
 */
export const ED25519_SECRET_BYTES = 64;
/** Bytes a `whpk_` public key decodes to (a raw Ed25519 public key). */
export const ED25519_PUBLIC_KEY_BYTES = 32;

/**
 * How an endpoint's requests are signed (Standard Webhooks "Signature scheme"):
 * `hmac-sha256` — symmetric, `whsec_` secrets, signatures `v1,…`;
 * `ed25519` — asymmetric, `whsk_` secret key kept by Postern, `whpk_` public key for the receiver,
 * signatures `v1a,…`.
 */
export type SignatureScheme = 'hmac-sha256' | 'ed25519';
/** Every signature scheme, default first. */
export const SIGNATURE_SCHEMES: readonly SignatureScheme[] = ['hmac-sha256', 'ed25519'];
/** The scheme of an endpoint that names none. */
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = 'hmac-sha256';

/** Why a secret was refused; see {@link InvalidSecretError}. */
export type InvalidSecretReason = 'missing_prefix' | 'not_base64' | 'too_short' | 'too_long' | 'key_pair_mismatch';

/**
 * Thrown by {@link parseSecret}, {@link parseSigningSecret} (and everything that
 * signs) for a secret that is neither `whsec_` + canonical base64 of 24 to 64
 * bytes nor `whsk_` + canonical base64 of an Ed25519 seed and its public key.
 */
export class InvalidSecretError extends Error {
  /** Machine-readable cause, safe to return in an API error. */
  readonly reason: InvalidSecretReason;

  constructor(reason: InvalidSecretReason, scheme: SignatureScheme = 'hmac-sha256') {
    const expected =
      scheme === 'ed25519'
        ? `${ED25519_SECRET_PREFIX} + base64 of the ${ED25519_SECRET_BYTES}-byte Ed25519 seed and public key`
        : `${SECRET_PREFIX} + base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`;
    super(`invalid webhook secret: ${reason.replace(/_/g, ' ')} (expected ${expected})`);
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

function decodeBase64(encoded: string, scheme: SignatureScheme): Buffer {
  if (encoded.length === 0 || !BASE64.test(encoded)) throw new InvalidSecretError('not_base64', scheme);
  return Buffer.from(encoded, 'base64');
}

/**
 * The private KeyObject of a raw seed. JWK, not PKCS#8 DER: measured here, Node imports the JWK in
 * about a tenth of the time. Node requires `x` but derives the key from `d` alone, so the caller
 * still checks the public half.
 */
function ed25519PrivateKey(seed: Buffer, publicKey: Buffer): KeyObject {
  return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: publicKey.toString('base64url') }, format: 'jwk' });
}

function rawPublicKey(key: KeyObject): Buffer {
  return Buffer.from(key.export({ format: 'jwk' }).x as string, 'base64url');
}

/**
 * Makes a new Ed25519 key pair for an endpoint (Standard Webhooks asymmetric scheme).
 *
 * @returns `whsk_` + standard base64 (with padding) of the 32-byte seed followed by the
 *   32-byte public key — the layout svix-server uses (see {@link ED25519_SECRET_BYTES}).
 */
export function generateEd25519Secret(): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const pair = Buffer.concat([Buffer.from(jwk.d as string, 'base64url'), Buffer.from(jwk.x as string, 'base64url')]);
  return ED25519_SECRET_PREFIX + pair.toString('base64');
}

/**
 * Makes a new secret of `scheme`: {@link generateSecret} (32 bytes) for `hmac-sha256`,
 * {@link generateEd25519Secret} for `ed25519`.
 *
 * @param scheme - default `hmac-sha256`.
 */
export function generateSigningSecret(scheme: SignatureScheme = DEFAULT_SIGNATURE_SCHEME): string {
  return scheme === 'ed25519' ? generateEd25519Secret() : generateSecret();
}

/**
 * The scheme a secret belongs to, by its prefix (Standard Webhooks: the prefix tells the scheme):
 * `whsec_` → `hmac-sha256`, `whsk_` → `ed25519`, anything else → null. Does not check the rest.
 */
export function signatureSchemeOf(secret: string): SignatureScheme | null {
  if (typeof secret !== 'string') return null;
  if (secret.startsWith(SECRET_PREFIX)) return 'hmac-sha256';
  if (secret.startsWith(ED25519_SECRET_PREFIX)) return 'ed25519';
  return null;
}

/**
 * A secret decoded for signing: the HMAC key bytes, or the Ed25519 private key with its
 * `whpk_` public key. Parsing an Ed25519 key costs about as much as signing with it, so a
 * sender keeps these ({@link createSigningKeyCache}) rather than parsing per attempt.
 */
export type SigningKey =
  | { readonly scheme: 'hmac-sha256'; readonly key: Buffer }
  | { readonly scheme: 'ed25519'; readonly privateKey: KeyObject; readonly publicKey: string };

/**
 * Decodes a `whsec_` or `whsk_` secret for signing. For `whsk_`, the public half must be the
 * public key of the seed (Standard Webhooks: a standard Ed25519 key pair).
 *
 * @throws InvalidSecretError with `reason` `missing_prefix` (neither prefix), `not_base64`,
 *   `too_short`, `too_long` (HMAC: outside 24..64 bytes; Ed25519: not exactly 64) or
 *   `key_pair_mismatch`.
 */
export function parseSigningSecret(secret: string): SigningKey {
  if (signatureSchemeOf(secret) !== 'ed25519') return { scheme: 'hmac-sha256', key: parseSecret(secret) };
  const pair = decodeBase64(secret.slice(ED25519_SECRET_PREFIX.length), 'ed25519');
  if (pair.length < ED25519_SECRET_BYTES) throw new InvalidSecretError('too_short', 'ed25519');
  if (pair.length > ED25519_SECRET_BYTES) throw new InvalidSecretError('too_long', 'ed25519');
  const publicKey = pair.subarray(32);
  let privateKey: KeyObject;
  try {
    privateKey = ed25519PrivateKey(pair.subarray(0, 32), publicKey);
  } catch {
    // Newer Node (24) checks the JWK's `x` against `d` itself and refuses a pair that does not match.
    throw new InvalidSecretError('key_pair_mismatch', 'ed25519');
  }
  if (!rawPublicKey(createPublicKey(privateKey)).equals(publicKey)) throw new InvalidSecretError('key_pair_mismatch', 'ed25519');
  return { scheme: 'ed25519', privateKey, publicKey: ED25519_PUBLIC_KEY_PREFIX + publicKey.toString('base64') };
}

/**
 * Whether {@link parseSigningSecret} would accept `secret`, and, when `scheme` is given, whether
 * the secret is of that scheme.
 */
export function isValidSigningSecret(secret: string, scheme?: SignatureScheme): boolean {
  if (scheme !== undefined && signatureSchemeOf(secret) !== scheme) return false;
  try {
    parseSigningSecret(secret);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `whpk_` public key of a stored `whsk_` secret, or null for any other secret. Cheap (no
 * key derivation): it reads the public half of the pair, which {@link parseSigningSecret}
 * checked when the secret was accepted.
 */
export function publicKeyOf(secret: string): string | null {
  if (signatureSchemeOf(secret) !== 'ed25519') return null;
  const pair = Buffer.from(secret.slice(ED25519_SECRET_PREFIX.length), 'base64');
  return pair.length === ED25519_SECRET_BYTES ? ED25519_PUBLIC_KEY_PREFIX + pair.subarray(32).toString('base64') : null;
}

/**
 * Decodes a `whpk_` public key (Standard Webhooks) for verifying `v1a` signatures.
 *
 * @throws InvalidSecretError (`missing_prefix`, `not_base64`, `too_short`, `too_long`).
 */
export function parsePublicKey(publicKey: string): KeyObject {
  if (typeof publicKey !== 'string' || !publicKey.startsWith(ED25519_PUBLIC_KEY_PREFIX)) throw new InvalidSecretError('missing_prefix', 'ed25519');
  const raw = decodeBase64(publicKey.slice(ED25519_PUBLIC_KEY_PREFIX.length), 'ed25519');
  if (raw.length < ED25519_PUBLIC_KEY_BYTES) throw new InvalidSecretError('too_short', 'ed25519');
  if (raw.length > ED25519_PUBLIC_KEY_BYTES) throw new InvalidSecretError('too_long', 'ed25519');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** A bounded memo of parsed secrets; see {@link createSigningKeyCache}. */
export interface SigningKeyCache {
  /**
   * The parsed key of `secret`, parsed on first use.
   *
   * @throws InvalidSecretError as {@link parseSigningSecret} (a refused secret is not kept).
   */
  get(secret: string): SigningKey;
  /** Secrets held now. */
  readonly size: number;
}

/**
 * A least-recently-used memo of {@link parseSigningSecret}, keyed by the secret string, so a
 * sender turns an endpoint's `whsk_` secret into a KeyObject once rather than on every attempt
 * (parsing costs about as much as the signature itself). A rotated secret is a new string, so
 * a stale entry is never used; it ages out.
 *
 * @param maxEntries - secrets kept, integer ≥ 1, default 10 000.
 */
export function createSigningKeyCache(maxEntries = 10_000): SigningKeyCache {
  if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  const keys = new Map<string, SigningKey>();
  return {
    get(secret) {
      const hit = keys.get(secret);
      if (hit) {
        // Map keeps insertion order: re-inserting marks it most recently used.
        keys.delete(secret);
        keys.set(secret, hit);
        return hit;
      }
      const parsed = parseSigningSecret(secret);
      keys.set(secret, parsed);
      if (keys.size > maxEntries) keys.delete(keys.keys().next().value as string);
      return parsed;
    },
    get size() {
      return keys.size;
    },
  };
}

/** The signed content of one request. */
export interface SignInput {
  /** Endpoint secret: `whsec_…` (signs `v1`) or `whsk_…` (signs `v1a`). */
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

/** The signed content, Standard Webhooks "Signature scheme": `<msg_id>.<timestamp>.<payload>`. */
function signedContent(msgId: string, timestampS: number, body: string): Buffer {
  return Buffer.from(`${msgId}.${timestampS}.${body}`, 'utf8');
}

function hmacBase64(key: Buffer, msgId: string, timestampS: number, body: string): string {
  return createHmac('sha256', key).update(signedContent(msgId, timestampS, body)).digest('base64');
}

/**
 * One Standard Webhooks signature with an already parsed key: `v1,<base64 HMAC-SHA256>` for
 * `hmac-sha256`, `v1a,<base64 Ed25519 signature>` for `ed25519`, both over
 * `<msgId>.<timestampS>.<body>` (UTF-8).
 *
 * @throws RangeError when `timestampS` is not a non-negative integer.
 */
export function signWithKey(key: SigningKey, msgId: string, timestampS: number, body: string): string {
  checkTimestamp(timestampS);
  if (key.scheme === 'hmac-sha256') return `v1,${hmacBase64(key.key, msgId, timestampS, body)}`;
  return `v1a,${cryptoSign(null, signedContent(msgId, timestampS, body), key.privateKey).toString('base64')}`;
}

/**
 * One Standard Webhooks signature: HMAC-SHA256 keyed with the decoded `whsec_` secret (`v1,…`),
 * or Ed25519 with the `whsk_` secret key (`v1a,…`), over `<msgId>.<timestampS>.<body>` (UTF-8).
 *
 * @returns `v1,<base64 signature>` or `v1a,<base64 signature>`.
 * @throws InvalidSecretError for a malformed secret; RangeError when
 *   `timestampS` is not a non-negative integer.
 */
export function sign({ secret, msgId, timestampS, body }: SignInput): string {
  checkTimestamp(timestampS);
  return signWithKey(parseSigningSecret(secret), msgId, timestampS, body);
}

/** Input of {@link signatureHeader}: {@link SignInput} with every secret still valid. */
export interface SignatureHeaderInput {
  /** Current secret first, then any rotated-out secrets still in their grace period; at least one; schemes may mix. */
  secrets: readonly string[];
  msgId: string;
  timestampS: number;
  body: string;
  /** How a secret becomes a key: a {@link SigningKeyCache}'s `get` on the hot path; default {@link parseSigningSecret}. */
  keyOf?: (secret: string) => SigningKey;
}

/**
 * The `webhook-signature` header value: one `v1,…` or `v1a,…` signature per secret,
 * space-separated, so a receiver that still has the previous secret (or public key) keeps
 * verifying during a rotation (Standard Webhooks). Repeated secrets are signed once.
 *
 * @throws RangeError when `secrets` is empty or `timestampS` is invalid;
 *   InvalidSecretError for a malformed secret.
 */
export function signatureHeader({ secrets, msgId, timestampS, body, keyOf = parseSigningSecret }: SignatureHeaderInput): string {
  if (secrets.length === 0) throw new RangeError('signatureHeader needs at least one secret');
  checkTimestamp(timestampS);
  return [...new Set(secrets)].map((secret) => signWithKey(keyOf(secret), msgId, timestampS, body)).join(' ');
}

/** Input of {@link verify}. */
export interface VerifyInput extends SignInput {
  /**
   * What the receiver holds: a `whsec_` secret (checks `v1` signatures), or a `whpk_` public key
   * (checks `v1a` signatures; a `whsk_` secret key is accepted too and checks through its public key).
   */
  secret: string;
  /** The received `webhook-signature` header (one or more space-separated `v1,…` / `v1a,…`). */
  header: string;
  /** The receiver's clock, Unix epoch seconds. */
  nowS: number;
  /** Accepted skew either way, seconds; default 300. */
  toleranceS?: number;
}

/**
 * Receiver-side check, for tests and demo receivers: true when the timestamp
 * is within `toleranceS` of `nowS` and any signature of the key's version in `header`
 * matches — `v1` by constant-time comparison with the HMAC, `v1a` by Ed25519
 * verification with the public key (Standard Webhooks "Verifying signatures").
 * Other versions in the header are ignored.
 *
 * @throws InvalidSecretError for a malformed secret or public key (a configuration error,
 *   not a bad request).
 */
export function verify({ secret, msgId, timestampS, body, header, nowS, toleranceS = DEFAULT_TOLERANCE_S }: VerifyInput): boolean {
  const publicKey = secret.startsWith(ED25519_PUBLIC_KEY_PREFIX) ? parsePublicKey(secret) : null;
  const signing = publicKey ? null : parseSigningSecret(secret);
  if (!Number.isSafeInteger(timestampS) || timestampS < 0) return false;
  if (Math.abs(nowS - timestampS) > toleranceS) return false;
  if (signing?.scheme === 'hmac-sha256') {
    const expected = Buffer.from(hmacBase64(signing.key, msgId, timestampS, body), 'utf8');
    let matched = false;
    for (const given of signaturesOfVersion(header, 'v1')) {
      const bytes = Buffer.from(given, 'utf8');
      if (bytes.length === expected.length && timingSafeEqual(bytes, expected)) matched = true;
    }
    return matched;
  }
  const key = publicKey ?? createPublicKey((signing as Extract<SigningKey, { scheme: 'ed25519' }>).privateKey);
  const content = signedContent(msgId, timestampS, body);
  return signaturesOfVersion(header, 'v1a').some((given) => cryptoVerify(null, content, key, Buffer.from(given, 'base64')));
}

/** The base64 parts of `header`'s signatures of `version` (`v1,…` or `v1a,…`). */
function signaturesOfVersion(header: string, version: 'v1' | 'v1a'): string[] {
  const out: string[] = [];
  for (const part of header.split(' ')) {
    const comma = part.indexOf(',');
    if (comma >= 0 && part.slice(0, comma) === version) out.push(part.slice(comma + 1));
  }
  return out;
}
