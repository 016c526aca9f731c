import type { ConnectionOptions, JobsOptions, Queue } from 'bullmq';
import { createDeliveryQueue, deliveryJobOrgId, type DeliveryJobData } from './delivery-queue.js';
import type { KeySchema } from './keys.js';

/** One `addBulk` entry of a delivery job. */
export interface DeliveryJobEntry {
  name: string;
  data: DeliveryJobData;
  opts?: JobsOptions;
}

/**
 * The N BullMQ queues that carry deliveries (`QUEUE_PARTITIONS`), each under its own hash-tagged
 * prefix so that on Redis Cluster one queue is one slot and N queues spread over the nodes. An
 * org's deliveries always go to one partition ({@link KeySchema.partitionOf}), so a parked
 * delivery is woken in the queue that holds it.
 */
export class DeliveryQueues {
  constructor(
    /** The queues, index = partition number. */
    readonly partitions: readonly Queue<DeliveryJobData>[],
    private readonly keys: KeySchema,
  ) {}

  /** The queue that carries the org's deliveries. */
  forOrg(orgId: string): Queue<DeliveryJobData> {
    return this.partitions[this.keys.partitionOf(orgId)]!;
  }

  /**
   * Adds jobs, each to its org's partition (one `addBulk` per partition touched). A legacy
   * `{v: 1}` job has no org and goes to partition 0.
   */
  async addBulk(jobs: readonly DeliveryJobEntry[]): Promise<void> {
    const byPartition = new Map<number, DeliveryJobEntry[]>();
    for (const job of jobs) {
      const orgId = deliveryJobOrgId(job.data);
      const n = orgId ? this.keys.partitionOf(orgId) : 0;
      const list = byPartition.get(n) ?? [];
      list.push(job);
      byPartition.set(n, list);
    }
    await Promise.all([...byPartition].map(([n, list]) => this.partitions[n]!.addBulk(list)));
  }

  /** Listens for errors of every partition's queue. */
  onError(listener: (err: Error) => void): void {
    for (const q of this.partitions) q.on('error', listener);
  }

  /** Closes every partition's queue (not the connection). */
  async close(): Promise<void> {
    await Promise.all(this.partitions.map((q) => q.close()));
  }
}

/** Opens every partition's queue over one connection (a producer's, or a sender's for re-queueing and waking). */
export function createDeliveryQueues(connection: ConnectionOptions, keys: KeySchema): DeliveryQueues {
  const partitions = Array.from({ length: keys.queuePartitions }, (_, n) => createDeliveryQueue(connection, keys.queuePrefix(n)));
  return new DeliveryQueues(partitions, keys);
}
