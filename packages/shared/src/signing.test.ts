import { Webhook } from 'standardwebhooks';
import {
  InvalidSecretError,
  generateSecret,
  isValidSecret,
  parseSecret,
  sign,
  signatureHeader,
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
