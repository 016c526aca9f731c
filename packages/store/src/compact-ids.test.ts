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
