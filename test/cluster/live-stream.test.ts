import type { Redis } from 'ioredis';
import type { LiveStreamMessage } from '@postern/client';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { clusterMasters, crossSlotErrors, describeOnCluster } from './cluster-support.js';

/**
 * Live deliveries on a real three-master Redis Cluster: orgs whose feeds sit on different masters
 * each get their own changes, through one reader per org, and no command crosses slots.
 */

describeOnCluster('live deliveries on Redis Cluster', () => {
  let postern: TestPostern;
  let receiver: TestReceiver;
  let masters: Redis[];
  let crossSlotBefore: number;

  beforeAll(async () => {
    masters = await clusterMasters();
    crossSlotBefore = await crossSlotErrors(masters);
    postern = await startPostern({ cluster: true });
    receiver = await startReceiver(() => 200);
  });
  afterAll(async () => {
    await postern?.close();
    await receiver?.close();
    for (const m of masters ?? []) m.disconnect();
  });

  test("each org's stream carries its own deliveries only, and no command crosses slots", async () => {
    const controller = new AbortController();
    const orgs = [];
    for (let i = 0; i < 4; i++) {
      const org = await postern.createOrg(`live-${i}`);
      await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(1) });
      const messages: LiveStreamMessage[] = [];
      let connected = false;
      void (async () => {
        for await (const m of postern.client(org.apiKey).deliveries.stream({}, { signal: controller.signal, onConnect: () => (connected = true) })) messages.push(m);
      })().catch(() => undefined);
      await waitUntil(`org ${i}'s stream to connect`, () => connected);
      orgs.push({ ...org, messages });
    }
    expect(postern.liveHub.readerCount).toBe(4);
    const sent: string[] = [];
    for (const org of orgs) sent.push((await postern.client(org.apiKey).events.create({ type: 'invoice.paid', data: {} })).deliveries[0]!.id);
    for (const [i, org] of orgs.entries()) {
      await waitUntil(`org ${i}'s delivery on its stream`, () => org.messages.some((m) => m.type === 'delivery' && m.delivery.deliveryId === sent[i] && m.delivery.status === 'succeeded'), 20_000);
      expect(org.messages.every((m) => m.type === 'delivery' && m.delivery.deliveryId === sent[i])).toBe(true);
    }
    controller.abort();
    expect(await crossSlotErrors(masters)).toBe(crossSlotBefore);
  }, 60_000);
});
