import { pino } from 'pino';
import { createIdFactory, createSecretBox, createSigningKeyCache } from '@postern/shared';
import { createRedisConnection, createStore, StatsFlusher, type Store } from '@postern/store';
import type { DeliverDeps, DeliveryTransport } from '@postern/sender';
import type { Redis } from 'ioredis';
import { startPostern, TEST_REDIS_URL, testSecretKeyring, type TestPostern } from './postern.js';

/**
 * What a test that drives attempts itself (`runAttempt`, no sender process) needs: a Postern
 * without a sender, one org, a store on a connection of its own, and the overview's counters
 * written only when the test says (`stats.flush()`, no timer).
 */
export interface AttemptHarness {
  postern: TestPostern;
  apiKey: string;
  orgId: string;
  /** The harness's own connection (the store's), apart from `postern.redis`. */
  redis: Redis;
  store: Store;
  stats: StatsFlusher;
  /** The deps of `runAttempt` with `transport`; ids the release wakes are pushed onto `woken`. */
  deps(transport: DeliveryTransport, woken?: string[]): DeliverDeps;
  close(): Promise<void>;
}

/** Starts an {@link AttemptHarness}: call it in `beforeAll` and `close()` in `afterAll`. */
export async function startAttemptHarness(): Promise<AttemptHarness> {
  const postern = await startPostern({ sender: false });
  const { apiKey, id: orgId } = await postern.createOrg();
  const redis = createRedisConnection(TEST_REDIS_URL, 'worker');
  const store = createStore({ redis, prefix: postern.prefix, secretBox: createSecretBox(testSecretKeyring()) });
  const stats = new StatsFlusher({ redis, keys: store.keys, liveFeed: store.liveFeed.settings, intervalMs: 0 });
  const ids = createIdFactory();
  return {
    postern,
    apiKey,
    orgId,
    redis,
    store,
    stats,
    deps: (transport, woken = []) => ({
      store,
      transport,
      clock: { now: () => Date.now() },
      random: () => 0.5,
      logger: pino({ level: 'silent' }),
      classifyAddress: () => null,
      userAgent: 'Postern/test',
      signingKeys: createSigningKeyCache(),
      ids,
      wake: async (_orgId, woke) => void woken.push(...woke),
      stats,
    }),
    async close() {
      await stats.close();
      await postern.close();
      await redis.quit();
    },
  };
}
