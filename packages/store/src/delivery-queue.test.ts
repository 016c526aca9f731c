import { createIdFactory } from '@postern/shared';
import { deliveryJobData, deliveryJobOptions, deliveryJobOrgId, parseDeliveryJob } from './delivery-queue.js';

const ids = createIdFactory();
const d = { id: ids('dlv', 1_796_000_000_000), endpointId: ids('ep', 1_795_000_000_000), eventId: ids('evt', 1_796_000_000_000), orgId: ids('org', 1_790_000_000_000) };

test('a job carries version 3: one string within 64 bytes as JSON, read back to every id with the job id', () => {
  const data = deliveryJobData(d);
  expect(typeof data).toBe('string');
  expect(Buffer.byteLength(JSON.stringify(data))).toBeLessThanOrEqual(64);
  expect(parseDeliveryJob(d.id, data)).toEqual({ v: 2, deliveryId: d.id, endpointId: d.endpointId, eventId: d.eventId, orgId: d.orgId });
  expect(deliveryJobOrgId(data)).toBe(d.orgId);
  // Its options stay short too (removal is the worker's option).
  expect(Buffer.byteLength(JSON.stringify({ ...deliveryJobOptions(d.id), attempts: 0 }))).toBeLessThanOrEqual(64);
});

test('versions 2 and 1 still parse; ids that are not ULID-shaped are queued as version 2; malformed data is null', () => {
  const v2 = { v: 2, deliveryId: d.id, endpointId: d.endpointId, eventId: d.eventId, orgId: d.orgId };
  expect(parseDeliveryJob(d.id, v2)).toEqual(v2);
  expect(parseDeliveryJob(d.id, { v: 1, deliveryId: d.id })).toEqual({ v: 1, deliveryId: d.id });
  expect(deliveryJobData({ ...d, eventId: 'evt_custom' })).toEqual({ ...v2, eventId: 'evt_custom' });
  expect(deliveryJobOrgId({ v: 1, deliveryId: d.id })).toBeNull();
  expect(parseDeliveryJob(d.id, '3short')).toBeNull();
  expect(parseDeliveryJob(undefined, deliveryJobData(d))).toBeNull();
  expect(parseDeliveryJob(d.id, { v: 3 })).toBeNull();
});
