import { createIdFactory } from '@postern/shared';
import { COMPACT_ID_CHARS, compactId, expandId } from './compact-ids.js';

test('an id round-trips through its 20-character form, for the smallest, largest and minted bodies', () => {
  const ids = createIdFactory();
  const samples = ['org_00000000000000000000000000', 'ep_7ZZZZZZZZZZZZZZZZZZZZZZZZZ', ids('evt', Date.now()), ids('dlv', 1_796_000_000_000)];
  for (const id of samples) {
    const prefix = id.slice(0, id.indexOf('_'));
    const short = compactId(id, prefix)!;
    expect(short).toHaveLength(COMPACT_ID_CHARS);
    expect(JSON.stringify(short)).toBe(`"${short}"`);
    expect(expandId(short, prefix)).toBe(id);
  }
});

test('ids of another shape, or another prefix, have no compact form; a malformed one expands to null', () => {
  expect(compactId('evt_01M8QW8806MT2VMJ0WCK7E8997', 'ep')).toBeNull();
  expect(compactId('evt_81M8QW8806MT2VMJ0WCK7E8997', 'evt')).toBeNull(); // over 128 bits
  expect(compactId('evt_custom-id', 'evt')).toBeNull();
  expect(expandId('short', 'evt')).toBeNull();
  expect(expandId('"'.repeat(20), 'evt')).toBeNull();
  expect(expandId('#'.repeat(20), 'evt')).toBeNull(); // 85^20 - 1 is over 128 bits
});

test('the compact form is the 128-bit number in base 85, as BigInt arithmetic gives it, for random bodies and edge values', () => {
  const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
  const reference = (body: string) => {
    let n = 0n;
    for (const c of body) n = (n << 5n) | BigInt(crockford.indexOf(c));
    let out = '';
    for (let i = 0; i < COMPACT_ID_CHARS; i++) {
      out = z85.charAt(Number(n % 85n)) + out;
      n /= 85n;
    }
    return out;
  };
  // A fixed-seed generator, so a failure names the same bodies every run.
  let seed = 20261203;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const bodies = ['0'.repeat(26), `7${'Z'.repeat(25)}`, `0${'Z'.repeat(25)}`, `7${'0'.repeat(25)}`, `1${'0'.repeat(25)}`];
  for (let k = 0; k < 2000; k++) bodies.push(Array.from({ length: 26 }, (_, i) => crockford.charAt(next() % (i === 0 ? 8 : 32))).join(''));
  for (const body of bodies) {
    const short = compactId(`dlv_${body}`, 'dlv');
    expect(short).toBe(reference(body));
    expect(expandId(short!, 'dlv')).toBe(`dlv_${body}`);
  }
  // The largest 20 characters that still fit 128 bits expand; one more does not.
  const max = reference(`7${'Z'.repeat(25)}`);
  expect(expandId(max, 'evt')).toBe(`evt_7${'Z'.repeat(25)}`);
  expect(expandId(`${max.slice(0, 19)}${z85.charAt(z85.indexOf(max.charAt(19)) + 1)}`, 'evt')).toBeNull();
});
