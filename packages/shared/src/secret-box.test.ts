import { randomBytes } from 'node:crypto';
import { createSecretBox, openWith, parseSecretKeyring, sealWith, sealedKeyId, secretContext, SecretUnreadableError, type SecretKey } from './secret-box.js';

const k1: SecretKey = { id: 'k1', key: randomBytes(32) };
const k2: SecretKey = { id: 'k2', key: randomBytes(32) };
const ctx = secretContext('org_a', 'ep_a', 'secrets');
const iv = Buffer.alloc(12, 7);

function unreadable(fn: () => unknown): SecretUnreadableError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SecretUnreadableError) return err;
    throw err;
  }
  throw new Error('expected SecretUnreadableError');
}

test('a sealed value names its key id, hides the plain text, and opens for its own context', () => {
  const sealed = sealWith(k1, 'whsec_abc', ctx, iv);
  expect(sealed).toMatch(/^sealed:v1:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
  expect(sealed).not.toContain('whsec_');
  expect(sealedKeyId(sealed)).toBe('k1');
  expect(openWith({ current: k1, previous: [] }, sealed, ctx)).toBe('whsec_abc');
});

test('another context (AAD) does not open it: a value moved to another record or field is refused', () => {
  const sealed = sealWith(k1, 'whsec_abc', ctx, iv);
  for (const other of [secretContext('org_a', 'ep_b', 'secrets'), secretContext('org_b', 'ep_a', 'secrets'), secretContext('org_a', 'ep_a', 'requestSecrets')]) {
    const err = unreadable(() => openWith({ current: k1, previous: [] }, sealed, other));
    expect(err.reason).toBe('cannot_open');
    expect(err.keyId).toBe('k1');
  }
});

test('a wrong key of the same id does not open it; an unknown key id says which', () => {
  const sealed = sealWith(k1, 'whsec_abc', ctx, iv);
  const wrong = unreadable(() => openWith({ current: { id: 'k1', key: randomBytes(32) }, previous: [] }, sealed, ctx));
  expect(wrong.reason).toBe('cannot_open');
  expect(wrong.message).toContain('k1');
  const unknown = unreadable(() => openWith({ current: k2, previous: [] }, sealed, ctx));
  expect(unknown.reason).toBe('unknown_key');
  expect(unknown.message).toContain('key id k1');
});

test('a tampered ciphertext or a changed key id in the header is refused', () => {
  const sealed = sealWith(k1, 'whsec_abc', ctx, iv);
  const body = sealed.split(':')[4]!;
  const flipped = `${sealed.slice(0, -body.length)}${body[0] === 'A' ? 'B' : 'A'}${body.slice(1)}`;
  expect(unreadable(() => openWith({ current: k1, previous: [] }, flipped, ctx)).reason).toBe('cannot_open');
  // The header is part of the AAD: relabelling a k1 value as k2 fails even where k2 has k1's bytes.
  const relabelled = sealed.replace('sealed:v1:k1:', 'sealed:v1:k2:');
  expect(unreadable(() => openWith({ current: { id: 'k2', key: k1.key }, previous: [] }, relabelled, ctx)).reason).toBe('cannot_open');
  expect(unreadable(() => openWith({ current: k1, previous: [] }, 'sealed:v1:k1:nope', ctx)).reason).toBe('malformed');
});

test('plain (legacy) values read as they are; previous keys still open', () => {
  const box = createSecretBox({ current: k2, previous: [k1] });
  expect(box.openSecret('whsec_legacy', ctx)).toBe('whsec_legacy');
  expect(box.openSecret(sealWith(k1, 'whsec_old', ctx, iv), ctx)).toBe('whsec_old');
  expect(box.isCurrent('whsec_legacy')).toBe(false);
  expect(box.isCurrent(sealWith(k1, 'x', ctx, iv))).toBe(false);
  expect(box.isCurrent(box.sealSecret('x', ctx))).toBe(true);
});

test('every seal uses a fresh IV; a box without a key stores plain and refuses sealed values', () => {
  const box = createSecretBox({ current: k1, previous: [] });
  expect(box.sealSecret('same', ctx)).not.toBe(box.sealSecret('same', ctx));
  const plainBox = createSecretBox({ current: null, previous: [] });
  expect(plainBox.currentKeyId).toBeNull();
  expect(plainBox.sealSecret('whsec_abc', ctx)).toBe('whsec_abc');
  expect(unreadable(() => plainBox.openSecret(box.sealSecret('x', ctx), ctx)).reason).toBe('unknown_key');
});

test('opened values are cached per context and replaced when the stored value changes', () => {
  const ring = { current: k2, previous: [k1] };
  const box = createSecretBox(ring, { maxCachedEntries: 2 });
  const a = sealWith(k1, 'one', ctx, iv);
  const b = sealWith(k1, 'two', ctx, Buffer.alloc(12, 9));
  expect(box.openSecret(a, ctx)).toBe('one');
  // With k1 gone, only the cached entry can still answer: the same stored value for the same context.
  ring.previous = [];
  expect(box.openSecret(a, ctx)).toBe('one');
  expect(() => box.openSecret(a, secretContext('org_a', 'ep_b', 'secrets'))).toThrow(SecretUnreadableError);
  expect(() => box.openSecret(b, ctx)).toThrow(SecretUnreadableError);
});

test('the keyring is read from the settings, each mistake named in one line', () => {
  const key = randomBytes(32).toString('base64');
  const old = randomBytes(32).toString('base64');
  const ring = parseSecretKeyring({ SECRETS_KEY: key, SECRETS_KEY_ID: 'k2', SECRETS_KEY_PREVIOUS: `k1:${old}` });
  expect(ring.current?.id).toBe('k2');
  expect(ring.previous.map((k) => k.id)).toEqual(['k1']);
  expect(parseSecretKeyring({ SECRETS_KEY: key }).current?.id).toBe('k1');
  expect(parseSecretKeyring({}).current).toBeNull();
  expect(() => parseSecretKeyring({ SECRETS_KEY: 'c2hvcnQ=' })).toThrow(/^invalid configuration: SECRETS_KEY: must be 32 bytes, base64/);
  expect(() => parseSecretKeyring({ SECRETS_KEY: key, SECRETS_KEY_ID: 'a b' })).toThrow(/^invalid configuration: SECRETS_KEY_ID: /);
  expect(() => parseSecretKeyring({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: old })).toThrow(/^invalid configuration: SECRETS_KEY_PREVIOUS: must be id:key/);
  expect(() => parseSecretKeyring({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: `k1:${old}` })).toThrow(/key id k1 appears twice/);
});
