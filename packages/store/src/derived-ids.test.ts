import { deliveryIdsOfEvent, eventIdOfDelivery, idTimeOf, idWithOffset, storedDeliveryIds, storedEventId } from './derived-ids.js';
import { createIdFactory } from '@postern/shared';

test('an event and the deliveries minted with it: each delivery is the event id plus its place, same time', () => {
  const ids = createIdFactory();
  const now = 1_796_000_000_000;
  const eventId = ids('evt', now);
  const deliveryIds = [ids('dlv', now), ids('dlv', now), ids('dlv', now)];
  expect(idTimeOf(eventId)).toBe(now);
  expect(deliveryIds.map((_, i) => idWithOffset(eventId, 'dlv', BigInt(i + 1)))).toEqual(deliveryIds);
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
  expect(idWithOffset('evt_01M8QW8806ZZZZZZZZZZZZZZZZ', 'dlv', 1n)).toBeNull();
  expect(storedDeliveryIds('evt_01M8QW8806ZZZZZZZZZZZZZZZY', ['dlv_01M8QW8806ZZZZZZZZZZZZZZZZ'])).toBe('1');
});
