import { createCipheriv, createDecipheriv, randomBytes as nodeRandomBytes } from 'node:crypto';

/**
 * Secrets at rest (README, "Secrets at rest"): every secret Postern stores is sealed with
 * AES-256-GCM under `SECRETS_KEY`, as
 *
 * ```
 * sealed:v1:<keyId>:<iv, base64url>:<ciphertext + 16-byte tag, base64url>
 * ```
 *
 * The additional authenticated data is `sealed:v1:<keyId>:` plus the value's *context* (org id,
 * record id, field name: {@link secretContext}), so a sealed value moved to another record or field
 * does not open. A stored value without the `sealed:` prefix was written before sealing and reads as
 * plain text.
 */
export const SEALED_PREFIX = 'sealed:';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** What a key id may look like: it is part of every sealed value. */
export const SECRET_KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
/** AES-256: a key is exactly this many bytes. */
export const SECRET_KEY_BYTES = 32;

/** One sealing key: its id (stored in each value it seals) and its 32 bytes. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

/** The keys a process holds: `current` seals (null: none, values are stored plain), all of them open. */
export interface SecretKeyring {
  current: SecretKey | null;
  previous: SecretKey[];
}

/** Why a stored value cannot be opened. */
export type SecretUnreadableReason = 'unknown_key' | 'cannot_open' | 'malformed';

/** A sealed value this process cannot open; `keyId` names the key it was sealed with (null when malformed). */
export class SecretUnreadableError extends Error {
  constructor(readonly reason: SecretUnreadableReason, readonly keyId: string | null) {
    super(
      reason === 'unknown_key'
        ? `secret sealed with key id ${keyId}, which is neither SECRETS_KEY_ID nor in SECRETS_KEY_PREVIOUS`
        : reason === 'cannot_open'
          ? `secret sealed with key id ${keyId} does not open with that key (wrong key, or a value moved from another record)`
          : 'stored secret is not a readable sealed value',
    );
    this.name = 'SecretUnreadableError';
  }
}

/**
 * Seals and opens the secrets of stored records; passed to the store in its deps. Opened values are
 * cached per context (one entry per record field, replaced when the stored value changes), so a
 * delivery's read costs a map lookup, not a decryption.
 */
export interface SecretBox {
  /** The id of the key that seals; null when the process has no key (values stay plain). */
  readonly currentKeyId: string | null;
  /** Seals `plain` for `context` with the current key; returns `plain` unchanged when there is no key. */
  sealSecret(plain: string, context: string): string;
  /**
   * Opens a stored value for `context`: a plain (legacy) value is returned as it is.
   * @throws SecretUnreadableError when it is sealed with an unknown key id, does not open, or is malformed
   */
  openSecret(stored: string, context: string): string;
  /** Whether `stored` is already as {@link sealSecret} would write it now (sealed with the current key; or plain when there is none). */
  isCurrent(stored: string): boolean;
}

/**
 * The context (additional authenticated data) of a stored secret: which org, which record (an
 * endpoint id, or the org id for the org's own secrets) and which field. Ids and field names contain
 * no `/`.
 */
export function secretContext(orgId: string, recordId: string, field: string): string {
  return `${orgId}/${recordId}/${field}`;
}

/** Whether a stored value is sealed (else it is legacy plain text). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

/** The key id a sealed value names, or null for a plain or malformed one. */
export function sealedKeyId(stored: string): string | null {
  if (!isSealed(stored)) return null;
  const parts = stored.split(':');
  return parts.length === 5 && parts[1] === VERSION && SECRET_KEY_ID_PATTERN.test(parts[2]!) ? parts[2]! : null;
}

/**
 * Seals `plain` with `key` (pure: the IV is given; 12 random bytes for every value).
 * @returns `sealed:v1:<keyId>:<iv>:<ciphertext+tag>`
 */
export function sealWith(key: SecretKey, plain: string, context: string, iv: Buffer): string {
  const head = `${SEALED_PREFIX}${VERSION}:${key.id}:`;
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(head + context, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${head}${iv.toString('base64url')}:${body.toString('base64url')}`;
}

/**
 * Opens a stored value with the keys of `keyring`; a value without the `sealed:` prefix is plain and
 * returned as it is.
 * @throws SecretUnreadableError `unknown_key` (no key of that id), `cannot_open` (wrong key bytes,
 *   other context, tampered), `malformed`
 */
export function openWith(keyring: SecretKeyring, stored: string, context: string): string {
  if (!isSealed(stored)) return stored;
  const parts = stored.split(':');
  if (parts.length !== 5 || parts[1] !== VERSION || !SECRET_KEY_ID_PATTERN.test(parts[2]!)) throw new SecretUnreadableError('malformed', null);
  const keyId = parts[2]!;
  const key = keyring.current?.id === keyId ? keyring.current : keyring.previous.find((k) => k.id === keyId);
  if (!key) throw new SecretUnreadableError('unknown_key', keyId);
  const iv = Buffer.from(parts[3]!, 'base64url');
  const body = Buffer.from(parts[4]!, 'base64url');
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new SecretUnreadableError('malformed', keyId);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, iv);
    decipher.setAAD(Buffer.from(`${SEALED_PREFIX}${VERSION}:${keyId}:${context}`, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnreadableError('cannot_open', keyId);
  }
}

/**
 * Builds a {@link SecretBox} over `keyring`.
 * @param options.maxCachedEntries - opened values kept (one per record field), default 100 000;
 *   past it the oldest entry goes.
 * @param options.randomBytes - IV source, default node:crypto's (tests may pass their own).
 */
export function createSecretBox(keyring: SecretKeyring, options: { maxCachedEntries?: number; randomBytes?: (n: number) => Buffer } = {}): SecretBox {
  const maxEntries = Math.max(1, options.maxCachedEntries ?? 100_000);
  const random = options.randomBytes ?? nodeRandomBytes;
  const cache = new Map<string, { stored: string; plain: string }>();
  const remember = (context: string, stored: string, plain: string) => {
    cache.delete(context);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    cache.set(context, { stored, plain });
  };
  const current = keyring.current;
  return {
    currentKeyId: current?.id ?? null,
    sealSecret(plain, context) {
      if (!current) return plain;
      const stored = sealWith(current, plain, context, random(IV_BYTES));
      remember(context, stored, plain);
      return stored;
    },
    openSecret(stored, context) {
      if (!isSealed(stored)) return stored;
      const hit = cache.get(context);
      if (hit && hit.stored === stored) return hit.plain;
      const plain = openWith(keyring, stored, context);
      remember(context, stored, plain);
      return plain;
    },
    isCurrent(stored) {
      return current ? sealedKeyId(stored) === current.id : !isSealed(stored);
    },
  };
}

/**
 * Reads `SECRETS_KEY`, `SECRETS_KEY_ID` and `SECRETS_KEY_PREVIOUS` (`id:key,id:key`; keys base64 of
 * 32 bytes, e.g. `openssl rand -base64 32`) into a keyring. Pure.
 * @throws Error whose message is one line naming the bad setting, e.g.
 *   `invalid configuration: SECRETS_KEY: must be 32 bytes, base64 (openssl rand -base64 32)`
 */
export function parseSecretKeyring(settings: { SECRETS_KEY?: string; SECRETS_KEY_ID?: string; SECRETS_KEY_PREVIOUS?: string }): SecretKeyring {
  const bad = (name: string, message: string) => new Error(`invalid configuration: ${name}: ${message}`);
  const keyOf = (name: string, raw: string): Buffer => {
    const bytes = Buffer.from(raw, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw) || bytes.length !== SECRET_KEY_BYTES) throw bad(name, 'must be 32 bytes, base64 (openssl rand -base64 32)');
    return bytes;
  };
  const id = settings.SECRETS_KEY_ID || 'k1';
  if (!SECRET_KEY_ID_PATTERN.test(id)) throw bad('SECRETS_KEY_ID', 'letters, digits, _ and - only, at most 32');
  const current = settings.SECRETS_KEY ? { id, key: keyOf('SECRETS_KEY', settings.SECRETS_KEY.trim()) } : null;
  const previous: SecretKey[] = [];
  for (const entry of (settings.SECRETS_KEY_PREVIOUS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const colon = entry.indexOf(':');
    const prevId = colon > 0 ? entry.slice(0, colon) : '';
    if (!SECRET_KEY_ID_PATTERN.test(prevId)) throw bad('SECRETS_KEY_PREVIOUS', 'must be id:key,id:key (key ids letters, digits, _ and -)');
    if (prevId === current?.id || previous.some((k) => k.id === prevId)) throw bad('SECRETS_KEY_PREVIOUS', `key id ${prevId} appears twice`);
    previous.push({ id: prevId, key: keyOf('SECRETS_KEY_PREVIOUS', entry.slice(colon + 1)) });
  }
  return { current, previous };
}
