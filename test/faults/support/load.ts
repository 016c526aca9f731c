import type { ApiClient } from '../../support/api-client.js';
import type { TestReceiver } from '../../support/receiver.js';

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

/** One answer of {@link startProducer}: the status (0 = no HTTP answer), how long it took, the body. */
export interface ProducerAnswer {
  status: number;
  ms: number;
  body: any;
  headers: Headers | null;
}

/** A producer posting events without pause until stopped. */
export interface Producer {
  readonly answers: ProducerAnswer[];
  /** Event ids that got 202. */
  accepted(): string[];
  /** Stops posting and resolves once the requests in flight are answered. */
  stop(): Promise<void>;
}

/** Starts `lanes` loops, each posting one event after the other until {@link Producer.stop}. */
export function startProducer(api: ApiClient, key: string, lanes = 2, type = 'load.test'): Producer {
  const answers: ProducerAnswer[] = [];
  let stopped = false;
  let n = 0;
  const lane = async () => {
    while (!stopped) {
      const sentAt = Date.now();
      const r = await api('POST', '/v1/events', { key, body: { type, data: { n: n++ } } }).catch(() => null);
      answers.push({ status: r?.status ?? 0, ms: Date.now() - sentAt, body: r?.body, headers: r?.headers ?? null });
      // A refused request comes back at once: do not spin on it.
      if (r?.status !== 202) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const running = Promise.all(Array.from({ length: lanes }, lane));
  return {
    answers,
    accepted: () => answers.filter((a) => a.status === 202).map((a) => a.body.id as string),
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** Requests a receiver got beyond the first for each delivery (`webhook-delivery-id`). */
export function duplicateRequests(receiver: TestReceiver): number {
  const deliveries = new Set(receiver.requests.map((r) => r.headers['webhook-delivery-id']));
  return receiver.requests.length - deliveries.size;
}
