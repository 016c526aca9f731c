import { Redis } from 'ioredis';
import { parseClusterNodes } from '@postern/store';
import { TEST_REDIS_CLUSTER_NODES } from '../support/postern.js';

/**
 * `describe` for suites that need the test Redis Cluster (`TEST_REDIS_CLUSTER_NODES`, started by
 * `scripts/redis-cluster.sh start` and by `.ci/run`). Without it the suite is skipped with a
 * message saying how to run it, except in CI (`CI=true`), where a missing cluster fails the suite.
 */
export function describeOnCluster(name: string, fn: () => void): void {
  if (TEST_REDIS_CLUSTER_NODES) return describe(name, fn);
  if (process.env.CI === 'true') {
    describe(name, () => {
      test('the Redis Cluster is there', () => {
        throw new Error('TEST_REDIS_CLUSTER_NODES is not set, but CI=true: .ci/run must start the cluster (scripts/redis-cluster.sh start)');
      });
    });
    return;
  }
  console.warn(`${name}: skipped, TEST_REDIS_CLUSTER_NODES is not set (export TEST_REDIS_CLUSTER_NODES=$(scripts/redis-cluster.sh start | sed -n 's/^TEST_REDIS_CLUSTER_NODES=//p'))`);
  describe.skip(name, fn);
}

/** One plain connection per master of the test cluster (it has no replicas: every seed is a master). */
export async function clusterMasters(): Promise<Redis[]> {
  const nodes = parseClusterNodes(TEST_REDIS_CLUSTER_NODES ?? '');
  const masters = nodes.map(({ host, port }) => new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 }));
  await Promise.all(masters.map((m) => m.connect()));
  for (const m of masters) {
    const role = (await m.role()) as [string, ...unknown[]];
    if (role[0] !== 'master') throw new Error(`${m.options.host}:${m.options.port} is not a master`);
  }
  return masters;
}

/** How many commands the masters refused with CROSSSLOT since they started (`INFO errorstats`), summed. */
export async function crossSlotErrors(masters: readonly Redis[]): Promise<number> {
  let total = 0;
  for (const m of masters) {
    const info = await m.info('errorstats');
    const match = /errorstat_CROSSSLOT:count=(\d+)/.exec(info);
    total += match ? Number(match[1]) : 0;
  }
  return total;
}

/** Keys of a Postern instance (its prefix and its queue partitions) on each master, in master order. */
export async function keysPerMaster(masters: readonly Redis[], prefix: string): Promise<number[]> {
  const counts: number[] = [];
  for (const m of masters) {
    let n = 0;
    for (const match of [`${prefix}:*`, `{${prefix}:q*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await m.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        n += keys.length;
      } while (cursor !== '0');
    }
    counts.push(n);
  }
  return counts;
}
