// One-shot migration to the org-tagged key layout (README, "Migrating data written by an older
// Postern"). Run with every Postern process stopped, against the standalone Redis the older
// release used: REDIS_URL=… REDIS_PREFIX=… QUEUE_PARTITIONS=… npm run migrate:key-layout
import { createDeliveryQueues, createKeySchema, createRedisConnection, migrateKeyLayout } from '@postern/store';

const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = process.env.REDIS_PREFIX || 'postern';
const partitions = Number(process.env.QUEUE_PARTITIONS || 1);
if (process.env.REDIS_CLUSTER_NODES) {
  console.error('migrate:key-layout runs on the standalone Redis of the older release (REDIS_URL), not on a cluster; copy the result into the cluster afterwards (README)');
  process.exit(1);
}
const redis = createRedisConnection(url, 'worker');
const keys = createKeySchema(prefix, { queuePartitions: partitions });
const queues = createDeliveryQueues(redis, keys);
try {
  const result = await migrateKeyLayout(redis, keys, queues);
  console.log(JSON.stringify({ prefix, queuePartitions: partitions, ...result }, null, 2));
} finally {
  await queues.close();
  await redis.quit();
}
