import { deliveryIdsOfEvent, eventIdOfDelivery, idTimeOf, idWithOffset, storedDeliveryIds, storedEventId } from './derived-ids.js';
import { createIdFactory } from '@postern/shared';

test('an event and the deliveries minted with it: each delivery is the event id plus its place, same time', () => {
  const ids = createIdFactory();
  const now = 1_796_000_000_000;
  const eventId = ids('evt', now);
  const deliveryIds = [ids('dlv', now), ids('dlv', now), ids('dlv', now)];
  expect(idTimeOf(eventId)).toBe(now);
  expect(deliveryIds.map((_, i) => idWithOffset(eventId, 'dlv', i + 1))).toEqual(deliveryIds);
  expect(storedDeliveryIds(eventId, deliveryIds)).toBe('3');
  expect(deliveryIdsOfEvent('3', eventId)).toEqual(deliveryIds);
  expect(deliveryIds.map((d) => storedEventId(eventId, d))).toEqual([null, '2', '3']);
  expect(deliveryIds.map((d, i) => eventIdOfDelivery([null, '2', '3'][i], d))).toEqual([eventId, eventId, eventId]);
});

test('ids that are not derived are stored whole, and older forms read as they are', () => {
  const eventId = 'evt_01M8QW8806MT2VMJ0WCK7E8997';
  // Another time, a random part below the event's, or a non-ULID id: whole.
  expect(storedEventId(eventId, 'dlv_01M8QW8807MT2VMJ0WCK7E8998')).toBe(eventId);
  expect(storedEventId(eventId, 'dlv_01M8QW8806MT2VMJ0WCK7E8996')).toBe(eventId);
  expect(storedEventId('evt_custom', 'dlv_01M8QW8806MT2VMJ0WCK7E8998')).toBe('evt_custom');
  expect(eventIdOfDelivery(eventId, 'dlv_01M8QW8806MT2VMJ0WCK7E8998')).toBe(eventId);
  expect(storedDeliveryIds(eventId, ['dlv_01M8QW8806MT2VMJ0WCK7E8999'])).toBe('["dlv_01M8QW8806MT2VMJ0WCK7E8999"]');
  expect(storedDeliveryIds(eventId, [])).toBe('[]');
  expect(deliveryIdsOfEvent('["dlv_x"]', eventId)).toEqual(['dlv_x']);
  expect(deliveryIdsOfEvent(undefined, eventId)).toEqual([]);
  // The random part at its top: no id past it.
  expect(idWithOffset('evt_01M8QW8806ZZZZZZZZZZZZZZZZ', 'dlv', 1)).toBeNull();
  expect(storedDeliveryIds('evt_01M8QW8806ZZZZZZZZZZZZZZZY', ['dlv_01M8QW8806ZZZZZZZZZZZZZZZZ'])).toBe('1');
});

test('offsets carry between the two halves of the random part, as 80-bit arithmetic does', () => {
  const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  // The reference: the random part as one 80-bit integer.
  const reference = (id: string, prefix: string, delta: number): string | null => {
    let random = 0n;
    for (const c of id.slice(-16)) random = random * 32n + BigInt(crockford.indexOf(c));
    random += BigInt(delta);
    if (random < 0n || random >= 1n << 80n) return null;
    let out = '';
    for (let i = 0; i < 16; i++, random >>= 5n) out = crockford[Number(random & 31n)] + out;
    return `${prefix}_${id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11)}${out}`;
  };
  const time = '01M8QW8806';
  const edges = ['0000000000000000', '000000000ZZZZZZZ', '0000000ZZZZZZZZZ', '0000000ZZZZZZZZY', '0000001000000000', 'ZZZZZZZZ00000000', 'ZZZZZZZZZZZZZZZZ', '7MT2VMJ0WCK7E899'];
  let seed = 7;
  const nextRandom = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const randoms = Array.from({ length: 200 }, () => Array.from({ length: 16 }, () => crockford[nextRandom() % 32]).join(''));
  for (const random of [...edges, ...randoms]) {
    const id = `evt_${time}${random}`;
    for (const delta of [1, 2, 9999, -1, -2, -9999, 2 ** 39, -(2 ** 39)]) expect(idWithOffset(id, 'dlv', delta)).toBe(reference(id, 'dlv', delta));
  }
  // A fan-out across the carry is still stored as offsets, and read back.
  const eventId = `evt_${time}0000000ZZZZZZZZY`;
  const deliveryIds = [1, 2, 3].map((k) => idWithOffset(eventId, 'dlv', k)!);
  expect(deliveryIds).toEqual([`dlv_${time}0000000ZZZZZZZZZ`, `dlv_${time}0000001000000000`, `dlv_${time}0000001000000001`]);
  expect(storedDeliveryIds(eventId, deliveryIds)).toBe('3');
  expect(deliveryIdsOfEvent('3', eventId)).toEqual(deliveryIds);
  expect(deliveryIds.map((d) => storedEventId(eventId, d))).toEqual([null, '2', '3']);
  expect(deliveryIds.map((d, i) => eventIdOfDelivery([null, '2', '3'][i], d))).toEqual([eventId, eventId, eventId]);
  // Halves two apart: far past any offset.
  expect(storedEventId(eventId, `dlv_${time}0000002000000000`)).toBe(eventId);
  expect(idTimeOf(eventId)).toBe(idTimeOf(`evt_${time}0000000000000000`));
  expect(idTimeOf('evt_short')).toBeNull();
});
