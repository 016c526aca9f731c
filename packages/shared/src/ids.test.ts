import { createIdFactory, idTimeMs, isId, newId } from './ids.js';

const T0 = Date.UTC(2026, 0, 1);

describe('newId', () => {
  it('is the prefix, an underscore and 26 Crockford base32 characters', () => {
    const id = newId('evt', T0);
    expect(id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(isId('evt', id)).toBe(true);
    expect(isId('dlv', id)).toBe(false);
    for (const prefix of ['org', 'ep', 'evt', 'dlv', 'key', 'ntf', 'ps'] as const) {
      expect(newId(prefix, T0).startsWith(`${prefix}_`)).toBe(true);
    }
  });

  it('encodes the time in the first 10 characters', () => {
    expect(newId('evt', 0, () => Buffer.alloc(10))).toBe(`evt_${'0'.repeat(26)}`);
    expect(newId('evt', 2 ** 48 - 1, () => Buffer.alloc(10, 0xff))).toBe(`evt_7${'Z'.repeat(25)}`);
    expect(idTimeMs(newId('dlv', T0))).toBe(T0);
  });

  it('sorts by creation time across milliseconds', () => {
    const times = [T0, T0 + 1, T0 + 2, T0 + 1000, T0 + 86_400_000, T0 + 10 ** 10];
    const ids = times.map((t) => newId('dlv', t, () => Buffer.alloc(10, 0xff - (t % 200))));
    expect([...ids].sort()).toEqual(ids);
  });

  it('uses the injected random source', () => {
    const fixed = () => Buffer.from('00112233445566778899', 'hex');
    expect(newId('evt', T0, fixed)).toBe(newId('evt', T0, fixed));
  });

  it('refuses bad input', () => {
    expect(() => newId('evt', -1)).toThrow(RangeError);
    expect(() => newId('evt', 1.5)).toThrow(RangeError);
    expect(() => newId('evt', 2 ** 48)).toThrow(RangeError);
    expect(() => newId('nope' as 'evt', T0)).toThrow(RangeError);
    expect(() => newId('evt', T0, () => Buffer.alloc(4))).toThrow(RangeError);
  });
});

describe('createIdFactory', () => {
  it('is strictly increasing within one millisecond', () => {
    const next = createIdFactory();
    const ids = Array.from({ length: 1000 }, () => next('evt', T0));
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => idTimeMs(id) === T0)).toBe(true);
  });

  it('carries into the next character when the random part ends in Z', () => {
    const next = createIdFactory(() => Buffer.from('0000000000000000001f', 'hex'));
    const a = next('evt', T0);
    const b = next('evt', T0);
    expect(a.endsWith('0Z')).toBe(true);
    expect(b.endsWith('10')).toBe(true);
  });

  it('carries from the low 40 bits of the random part into the high ones', () => {
    const next = createIdFactory(() => Buffer.from('0000000000ffffffffff', 'hex'));
    const a = next('evt', T0);
    const b = next('evt', T0);
    expect(a.slice(-16)).toBe('00000000ZZZZZZZZ');
    expect(b.slice(-16)).toBe('0000000100000000');
    expect(a < b).toBe(true);
    expect(newId('evt', T0, () => Buffer.from('0123456789abcdef0123', 'hex')).slice(-16)).toBe('04HMASW9NF6YY093');
  });

  it('stays increasing when the clock steps back, and moves on with it later', () => {
    const next = createIdFactory();
    const a = next('dlv', T0 + 5);
    const b = next('dlv', T0);
    const c = next('dlv', T0 + 6);
    expect(a < b && b < c).toBe(true);
    expect(idTimeMs(b)).toBe(T0 + 5);
    expect(idTimeMs(c)).toBe(T0 + 6);
  });

  it('keeps no state between factories', () => {
    const fixed = () => Buffer.alloc(10, 1);
    expect(createIdFactory(fixed)('evt', T0)).toBe(createIdFactory(fixed)('evt', T0));
  });

  it('throws when a millisecond runs out of ids', () => {
    const next = createIdFactory(() => Buffer.alloc(10, 0xff));
    next('evt', T0);
    expect(() => next('evt', T0)).toThrow(RangeError);
  });
});

describe('isId and idTimeMs', () => {
  it('rejects malformed ids', () => {
    const good = newId('ep', T0);
    expect(isId('ep', good)).toBe(true);
    expect(isId('ep', good.toLowerCase())).toBe(false);
    expect(isId('ep', good.slice(0, -1))).toBe(false);
    expect(isId('ep', `${good}0`)).toBe(false);
    expect(isId('ep', good.slice(0, -1) + 'U')).toBe(false);
    expect(isId('ep', `ep_8${'0'.repeat(25)}`)).toBe(false);
    expect(() => idTimeMs('evt_short')).toThrow(RangeError);
    expect(() => idTimeMs(`zzz_${'0'.repeat(26)}`)).toThrow(RangeError);
  });
});
