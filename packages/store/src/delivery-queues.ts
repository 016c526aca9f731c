import type { ConnectionOptions, JobsOptions, Queue } from 'bullmq';
import { Job } from './bullmq-classes.js';
import { createDeliveryQueue, deliveryJobOrgId, type DeliveryJobData } from './delivery-queue.js';
import type { KeySchema } from './keys.js';
import type { RedisClient } from './redis-connection.js';
import { idTimeOf } from './derived-ids.js';

/** BullMQ scores a delayed job `dueMs * 0x1000 + counter`: the due time is the score over this. */
const DELAYED_SCORE_FACTOR = 0x1000;

/** One `addBulk` entry of a delivery job. */
export interface DeliveryJobEntry {
  name: string;
  data: DeliveryJobData;
  opts?: JobsOptions;
}

/** What {@link DeliveryQueues.wake} did: how many delayed jobs it promoted, and the deliveries whose job was not delayed (running, waiting, or gone). */
export interface WakeResult {
  promoted: number;
  notPromoted: string[];
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
    /** The connection the queues were made with, when it is a client (ingest waits on its writes: `ACCEPT_DURABILITY`). */
    readonly connection: RedisClient | null = null,
  ) {}

  /** The queue that carries the org's deliveries. */
  forOrg(orgId: string): Queue<DeliveryJobData> {
    return this.partitions[this.keys.partitionOf(orgId)]!;
  }

  /**
   * Wakes parked deliveries of an org: promotes each one's delayed job (job id = delivery id), no
   * read first. A job that is not delayed (running, waiting, or not yet delayed: it then wakes
   * itself) is left alone, and so is one that is gone. Resolves once every promote answered, with
   * how many were promoted and which were not (`notPromoted`): among those, a delivery whose job
   * was lost (a move refused for good, Redis trouble) would hold its line until the reconciler's
   * grace ran out, so the caller re-queues the ones without a job (`requeueWithoutJob` in the sender).
   */
  async wake(orgId: string, deliveryIds: readonly string[]): Promise<WakeResult> {
    const queue = this.forOrg(orgId);
    const result: WakeResult = { promoted: 0, notPromoted: [] };
    await Promise.all(
      deliveryIds.map((id) =>
        new Job(queue, 'deliver', { v: 1, deliveryId: id } as DeliveryJobData, {}, id).promote().then(
          () => {
            result.promoted += 1;
          },
          () => {
            result.notPromoted.push(id);
          },
        ),
      ),
    );
    return result;
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

  /**
   * How long the delivery that has waited longest past its due time has been waiting, ms (0 when
   * every due job has started): over every partition, the oldest job of the waiting list (its due
   * time is its delivery's `nextAttemptAt`, or `createdAt` for a first attempt) and the earliest
   * job of the delayed set once its time has passed (BullMQ promotes those only when a worker
   * fetches). A few single-key reads per partition (Redis Cluster safe); for `/metrics`.
   */
  async longestOverdueMs(redis: RedisClient, nowMs: number): Promise<number> {
    const dues = await Promise.all(
      this.partitions.map(async (q) => {
        const [waitingId, earliestDelayed] = await Promise.all([redis.lindex(q.keys.wait!, -1), redis.zrange(q.keys.delayed!, 0, 0, 'WITHSCORES')]);
        let due = nowMs;
        const score = earliestDelayed[1];
        if (score !== undefined) due = Math.min(due, Math.floor(Number(score) / DELAYED_SCORE_FACTOR));
        if (waitingId) {
          const data = await redis.hget(q.toKey(waitingId), 'data');
          // Job data of any version (the compact version 3 string included) names the org.
          const orgId = data ? deliveryJobOrgId(JSON.parse(data) as DeliveryJobData) : null;
          if (orgId) {
            const [nextAttemptAt, createdAt] = await redis.hmget(this.keys.delivery(orgId, waitingId), 'nextAttemptAt', 'createdAt');
            // createdAt is left out when it is the time in the id (records.ts).
            const waitingDue = Number(nextAttemptAt || createdAt || idTimeOf(waitingId));
            if (Number.isFinite(waitingDue) && waitingDue > 0) due = Math.min(due, waitingDue);
          }
        }
        return due;
      }),
    );
    return Math.max(0, nowMs - Math.min(nowMs, ...dues));
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
  const client = typeof (connection as { status?: unknown }).status === 'string' ? (connection as RedisClient) : null;
  return new DeliveryQueues(partitions, keys, client);
}
