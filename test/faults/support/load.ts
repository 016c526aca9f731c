import type { ApiClient } from '../../support/api-client.js';

/** One event the API accepted (202). */
export interface AcceptedEvent {
  eventId: string;
  deliveryIds: string[];
}

/** Posts `count` events, `concurrency` at a time; every one must get 202. Returns them in posting order. */
export async function postEvents(api: ApiClient, key: string, count: number, concurrency = 8, type = 'load.test'): Promise<AcceptedEvent[]> {
  const out: AcceptedEvent[] = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const r = await api('POST', '/v1/events', { key, body: { type, data: { i } } });
      if (r.status !== 202) throw new Error(`event ${i}: ${r.status} ${JSON.stringify(r.body)}`);
      out[i] = { eventId: r.body.id, deliveryIds: (r.body.deliveries as { id: string }[]).map((d) => d.id) };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return out;
}
