import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  InvalidSecretError,
  createSigningKeyCache,
  generateEd25519Secret,
  generateSecret,
  generateSigningSecret,
  isValidSecret,
  isValidSigningSecret,
  parsePublicKey,
  parseSecret,
  parseSigningSecret,
  publicKeyOf,
  sign,
  signWithKey,
  signatureHeader,
  signatureSchemeOf,
  verify,
} from './signing.js';

// The worked example published with the Standard Webhooks specification.
const SPEC_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SPEC_MSG_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const SPEC_TIMESTAMP_S = 1614265330;
const SPEC_BODY = '{"test": 2432232314}';
const SPEC_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

const secretOf = (bytes: number, fill: number) => `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`;
const nowS = () => Math.floor(Date.now() / 1000);

const BODY = '{"id":"evt_01","type":"invoice.paid","timestamp":"2026-01-01T00:00:00.000Z","data":{"name":"Zoë ✓","n":1.0}}';

describe('sign', () => {
  it('reproduces the specification example', () => {
    expect(sign({ secret: SPEC_SECRET, msgId: SPEC_MSG_ID, timestampS: SPEC_TIMESTAMP_S, body: SPEC_BODY })).toBe(SPEC_SIGNATURE);
  });

  it('matches what the standardwebhooks package signs, for fixed vectors', () => {
    const vectors = [
      { secret: SPEC_SECRET, msgId: SPEC_MSG_ID, timestampS: SPEC_TIMESTAMP_S, body: SPEC_BODY },
      { secret: secretOf(32, 7), msgId: 'evt_01JD3Q5T9M7XKQ2V8N4R6B1C0F', timestampS: 1796000000, body: BODY },
      { secret: secretOf(64, 255), msgId: 'evt_x', timestampS: 0, body: '' },
    ];
    for (const v of vectors) {
      const theirs = new Webhook(v.secret).sign(v.msgId, new Date(v.timestampS * 1000), v.body);
      expect(sign(v)).toBe(theirs);
      expect(signatureHeader({ ...v, secrets: [v.secret] })).toBe(theirs);
    }
  });

  it('produces headers the standardwebhooks package verifies', () => {
    const secret = generateSecret();
    const timestampS = nowS();
    const msgId = 'evt_01JD3Q5T9M7XKQ2V8N4R6B1C0F';
    const headers = {
      'webhook-id': msgId,
      'webhook-timestamp': String(timestampS),
      'webhook-signature': signatureHeader({ secrets: [secret], msgId, timestampS, body: BODY }),
    };
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    // One changed byte in the body must fail their check.
    expect(() => new Webhook(secret).verify(BODY.replace('1.0', '1.5'), headers)).toThrow();
  });

  it('refuses a non-integer or negative timestamp', () => {
    expect(() => sign({ secret: SPEC_SECRET, msgId: 'a', timestampS: 1.5, body: '' })).toThrow(RangeError);
    expect(() => sign({ secret: SPEC_SECRET, msgId: 'a', timestampS: -1, body: '' })).toThrow(RangeError);
  });
});

describe('secrets', () => {
  it('generates whsec_ + base64 of 32 bytes by default, and other sizes in 24..64', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(parseSecret(secret)).toHaveLength(32);
    expect(parseSecret(generateSecret(24))).toHaveLength(24);
    expect(parseSecret(generateSecret(64))).toHaveLength(64);
    expect(generateSecret()).not.toBe(secret);
    expect(() => generateSecret(23)).toThrow(RangeError);
    expect(() => generateSecret(65)).toThrow(RangeError);
  });

  it.each([
    ['short (<24 bytes)', secretOf(23, 1), 'too_short'],
    ['long (>64 bytes)', secretOf(65, 1), 'too_long'],
    ['not base64', 'whsec_not*base64!!', 'not_base64'],
    ['badly padded', 'whsec_' + Buffer.alloc(32, 1).toString('base64').replace(/=+$/, ''), 'not_base64'],
    ['empty after prefix', 'whsec_', 'not_base64'],
    ['missing the prefix', Buffer.alloc(32, 1).toString('base64'), 'missing_prefix'],
    ['with another prefix', 'whsek_' + Buffer.alloc(32, 1).toString('base64'), 'missing_prefix'],
  ])('refuses a secret that is %s', (_label, secret, reason) => {
    expect(isValidSecret(secret)).toBe(false);
    let thrown: unknown;
    try {
      parseSecret(secret);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidSecretError);
    expect((thrown as InvalidSecretError).reason).toBe(reason);
    expect(() => sign({ secret, msgId: 'm', timestampS: 1, body: '' })).toThrow(InvalidSecretError);
  });

  it('accepts 24 and 64 byte secrets', () => {
    expect(isValidSecret(secretOf(24, 9))).toBe(true);
    expect(isValidSecret(secretOf(64, 9))).toBe(true);
  });
});

describe('rotation', () => {
  const oldSecret = secretOf(32, 1);
  const newSecret = secretOf(32, 2);
  const msgId = 'evt_rotate';

  it('signs with every secret, so either one verifies', () => {
    const timestampS = nowS();
    const header = signatureHeader({ secrets: [newSecret, oldSecret], msgId, timestampS, body: BODY });
    expect(header.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': msgId, 'webhook-timestamp': String(timestampS), 'webhook-signature': header };
    for (const secret of [oldSecret, newSecret]) {
      expect(() => new Webhook(secret).verify(BODY, headers)).not.toThrow();
      expect(verify({ secret, msgId, timestampS, body: BODY, header, nowS: timestampS })).toBe(true);
    }
    const stranger = secretOf(32, 3);
    expect(() => new Webhook(stranger).verify(BODY, headers)).toThrow();
    expect(verify({ secret: stranger, msgId, timestampS, body: BODY, header, nowS: timestampS })).toBe(false);
  });

  it('signs a repeated secret once and needs at least one', () => {
    expect(signatureHeader({ secrets: [oldSecret, oldSecret], msgId, timestampS: 5, body: '' }).split(' ')).toHaveLength(1);
    expect(() => signatureHeader({ secrets: [], msgId, timestampS: 5, body: '' })).toThrow(RangeError);
  });
});

describe('verify', () => {
  const secret = secretOf(32, 4);
  const msgId = 'evt_v';
  const timestampS = 1796000000;
  const header = sign({ secret, msgId, timestampS, body: BODY });

  it('accepts a header the standardwebhooks package made', () => {
    const theirs = new Webhook(secret).sign(msgId, new Date(timestampS * 1000), BODY);
    expect(verify({ secret, msgId, timestampS, body: BODY, header: theirs, nowS: timestampS })).toBe(true);
  });

  it('checks the timestamp window, 300 s by default', () => {
    expect(verify({ secret, msgId, timestampS, body: BODY, header, nowS: timestampS + 300 })).toBe(true);
    expect(verify({ secret, msgId, timestampS, body: BODY, header, nowS: timestampS + 301 })).toBe(false);
    expect(verify({ secret, msgId, timestampS, body: BODY, header, nowS: timestampS - 301 })).toBe(false);
    expect(verify({ secret, msgId, timestampS, body: BODY, header, nowS: timestampS + 1000, toleranceS: 1000 })).toBe(true);
  });

  it('rejects a changed body, id or timestamp, and ignores other versions', () => {
    expect(verify({ secret, msgId, timestampS, body: BODY + ' ', header, nowS: timestampS })).toBe(false);
    expect(verify({ secret, msgId: 'evt_w', timestampS, body: BODY, header, nowS: timestampS })).toBe(false);
    expect(verify({ secret, msgId, timestampS: timestampS + 1, body: BODY, header, nowS: timestampS })).toBe(false);
    const v2 = header.replace('v1,', 'v2,');
    expect(verify({ secret, msgId, timestampS, body: BODY, header: v2, nowS: timestampS })).toBe(false);
    expect(verify({ secret, msgId, timestampS, body: BODY, header: `v1a,x ${header}`, nowS: timestampS })).toBe(true);
  });
});

/**
 * The published Ed25519 vector of the Standard Webhooks reference server: svix/svix-webhooks,
 * server/svix-server/src/worker.rs, `test_asymmetric_key_signing` (key pair also in its README,
 * "Configuring the keys"). Its signature is the `v1a,…` in the example `webhook-signature` header
 * of the specification (standard-webhooks/standard-webhooks, spec/standard-webhooks.md, "Webhook
 * headers").
 */
const ED_SECRET = 'whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg==';
const ED_PUBLIC_KEY = 'whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4=';
const ED_SIGNATURE = 'v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==';

/** Node's own check of one `v1a,…` signature with a `whpk_` key, built here from the raw bytes (JWK), not by the code under test. */
function nodeVerifies(publicKey: string, msgId: string, timestampS: number, body: string, signature: string): boolean {
  const x = Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  expect(signature.startsWith('v1a,')).toBe(true);
  return cryptoVerify(null, Buffer.from(`${msgId}.${timestampS}.${body}`, 'utf8'), key, Buffer.from(signature.slice(4), 'base64'));
}

describe('ed25519 (Standard Webhooks asymmetric signatures)', () => {
  it('reproduces the published test vector', () => {
    expect(sign({ secret: ED_SECRET, msgId: SPEC_MSG_ID, timestampS: SPEC_TIMESTAMP_S, body: SPEC_BODY })).toBe(ED_SIGNATURE);
    expect(publicKeyOf(ED_SECRET)).toBe(ED_PUBLIC_KEY);
    const key = parseSigningSecret(ED_SECRET);
    expect(key.scheme).toBe('ed25519');
    expect(key.scheme === 'ed25519' && key.publicKey).toBe(ED_PUBLIC_KEY);
    expect(nodeVerifies(ED_PUBLIC_KEY, SPEC_MSG_ID, SPEC_TIMESTAMP_S, SPEC_BODY, ED_SIGNATURE)).toBe(true);
    expect(verify({ secret: ED_PUBLIC_KEY, msgId: SPEC_MSG_ID, timestampS: SPEC_TIMESTAMP_S, body: SPEC_BODY, header: ED_SIGNATURE, nowS: SPEC_TIMESTAMP_S })).toBe(true);
  });

  it('generates whsk_ key pairs whose signatures Node verifies with the whpk_ key, and nothing else does', () => {
    const secret = generateEd25519Secret();
    expect(secret).toMatch(/^whsk_[A-Za-z0-9+/]{86}==$/);
    expect(Buffer.from(secret.slice(5), 'base64')).toHaveLength(64);
    expect(signatureSchemeOf(secret)).toBe('ed25519');
    expect(generateSigningSecret('ed25519')).toMatch(/^whsk_/);
    expect(generateSigningSecret()).toMatch(/^whsec_/);
    expect(generateEd25519Secret()).not.toBe(secret);
    const publicKey = publicKeyOf(secret)!;
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const timestampS = 1796000000;
    const signature = sign({ secret, msgId: 'evt_ed', timestampS, body: BODY });
    expect(nodeVerifies(publicKey, 'evt_ed', timestampS, BODY, signature)).toBe(true);
    expect(nodeVerifies(publicKey, 'evt_ed', timestampS, BODY.replace('1.0', '1.5'), signature)).toBe(false);
    expect(nodeVerifies(publicKey, 'evt_ed', timestampS + 1, BODY, signature)).toBe(false);
    expect(nodeVerifies(ED_PUBLIC_KEY, 'evt_ed', timestampS, BODY, signature)).toBe(false);
  });

  it.each([
    ['short (<64 bytes)', 'whsk_' + Buffer.alloc(32, 1).toString('base64'), 'too_short'],
    ['long (>64 bytes)', 'whsk_' + Buffer.alloc(65, 1).toString('base64'), 'too_long'],
    ['not base64', 'whsk_not*base64!!', 'not_base64'],
    // The vector's seed with another public key (svix-server refuses it as a "Bad SK" too).
    ['a seed with a public key not its own', 'whsk_' + Buffer.concat([Buffer.from(ED_SECRET.slice(5), 'base64').subarray(0, 32), Buffer.alloc(32, 7)]).toString('base64'), 'key_pair_mismatch'],
    ['a public key instead of the secret key', ED_PUBLIC_KEY, 'missing_prefix'],
  ])('refuses a whsk_ secret that is %s', (_label, secret, reason) => {
    expect(isValidSigningSecret(secret)).toBe(false);
    let thrown: unknown;
    try {
      parseSigningSecret(secret);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidSecretError);
    expect((thrown as InvalidSecretError).reason).toBe(reason);
    expect(() => sign({ secret, msgId: 'm', timestampS: 1, body: '' })).toThrow(InvalidSecretError);
  });

  it('tells the schemes apart by prefix, and checks a secret against a scheme', () => {
    expect(signatureSchemeOf(SPEC_SECRET)).toBe('hmac-sha256');
    expect(signatureSchemeOf(ED_SECRET)).toBe('ed25519');
    expect(signatureSchemeOf('sk_x')).toBeNull();
    expect(isValidSigningSecret(ED_SECRET, 'ed25519')).toBe(true);
    expect(isValidSigningSecret(ED_SECRET, 'hmac-sha256')).toBe(false);
    expect(isValidSigningSecret(SPEC_SECRET, 'hmac-sha256')).toBe(true);
    expect(isValidSecret(ED_SECRET)).toBe(false);
    expect(publicKeyOf(SPEC_SECRET)).toBeNull();
    expect(() => parsePublicKey('whpk_' + Buffer.alloc(31).toString('base64'))).toThrow(InvalidSecretError);
    expect(() => parsePublicKey(ED_SECRET)).toThrow(InvalidSecretError);
  });

  it('signs with a new ed25519 key and an old HMAC secret during a rotation: each verifies its own signature', () => {
    const timestampS = nowS();
    const msgId = 'evt_switch';
    const header = signatureHeader({ secrets: [ED_SECRET, SPEC_SECRET], msgId, timestampS, body: BODY });
    const [first, second] = header.split(' ');
    expect(first).toMatch(/^v1a,/);
    expect(second).toMatch(/^v1,/);
    expect(nodeVerifies(ED_PUBLIC_KEY, msgId, timestampS, BODY, first!)).toBe(true);
    expect(verify({ secret: ED_PUBLIC_KEY, msgId, timestampS, body: BODY, header, nowS: timestampS })).toBe(true);
    expect(verify({ secret: SPEC_SECRET, msgId, timestampS, body: BODY, header, nowS: timestampS })).toBe(true);
    // The reference verifier skips the v1a signature it cannot check and accepts the v1 one.
    const headers = { 'webhook-id': msgId, 'webhook-timestamp': String(timestampS), 'webhook-signature': header };
    expect(() => new Webhook(SPEC_SECRET).verify(BODY, headers)).not.toThrow();
  });

  it('signs with both ed25519 keys during an ed25519 rotation', () => {
    const next = generateEd25519Secret();
    const timestampS = nowS();
    const header = signatureHeader({ secrets: [next, ED_SECRET], msgId: 'evt_r', timestampS, body: BODY });
    const parts = header.split(' ');
    expect(parts).toHaveLength(2);
    expect(nodeVerifies(publicKeyOf(next)!, 'evt_r', timestampS, BODY, parts[0]!)).toBe(true);
    expect(nodeVerifies(ED_PUBLIC_KEY, 'evt_r', timestampS, BODY, parts[1]!)).toBe(true);
    for (const key of [publicKeyOf(next)!, ED_PUBLIC_KEY, next]) expect(verify({ secret: key, msgId: 'evt_r', timestampS, body: BODY, header, nowS: timestampS })).toBe(true);
    const stranger = publicKeyOf(generateEd25519Secret())!;
    expect(verify({ secret: stranger, msgId: 'evt_r', timestampS, body: BODY, header, nowS: timestampS })).toBe(false);
    expect(verify({ secret: ED_PUBLIC_KEY, msgId: 'evt_r', timestampS, body: BODY + ' ', header, nowS: timestampS })).toBe(false);
    expect(verify({ secret: ED_PUBLIC_KEY, msgId: 'evt_r', timestampS, body: BODY, header, nowS: timestampS + 301 })).toBe(false);
    // A v1 part is not an Ed25519 signature, whatever it holds.
    expect(verify({ secret: ED_PUBLIC_KEY, msgId: SPEC_MSG_ID, timestampS: SPEC_TIMESTAMP_S, body: SPEC_BODY, header: ED_SIGNATURE.replace('v1a,', 'v1,'), nowS: SPEC_TIMESTAMP_S })).toBe(false);
  });
});

describe('createSigningKeyCache', () => {
  it('parses a secret once and signs as parsing each time would', () => {
    const cache = createSigningKeyCache(2);
    const key = cache.get(ED_SECRET);
    expect(cache.get(ED_SECRET)).toBe(key);
    expect(signWithKey(key, SPEC_MSG_ID, SPEC_TIMESTAMP_S, SPEC_BODY)).toBe(ED_SIGNATURE);
    expect(signatureHeader({ secrets: [ED_SECRET], msgId: SPEC_MSG_ID, timestampS: SPEC_TIMESTAMP_S, body: SPEC_BODY, keyOf: cache.get })).toBe(ED_SIGNATURE);
    expect(signWithKey(cache.get(SPEC_SECRET), SPEC_MSG_ID, SPEC_TIMESTAMP_S, SPEC_BODY)).toBe(SPEC_SIGNATURE);
  });

  it('keeps at most maxEntries, dropping the least recently used, and never keeps a refused secret', () => {
    const cache = createSigningKeyCache(2);
    const a = cache.get(ED_SECRET);
    cache.get(SPEC_SECRET);
    cache.get(ED_SECRET); // now the most recently used
    cache.get(generateSecret());
    expect(cache.size).toBe(2);
    expect(cache.get(ED_SECRET)).toBe(a);
    expect(() => cache.get('whsk_AAAA')).toThrow(InvalidSecretError);
    expect(cache.size).toBe(2);
    expect(() => createSigningKeyCache(0)).toThrow(RangeError);
  });
});
