import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';

const beatScript = LuaScript.load('beat-sender');
const reclaimScript = LuaScript.load('reclaim-jobs');

/** An endpoint a sender held a concurrency slot of. */
export interface EndpointRef {
  orgId: string;
  endpointId: string;
}

/** Input of {@link SenderRegistry.beat}. */
export interface SenderBeatInput {
  senderId: string;
  /** The sender's BullMQ worker ids, index = queue partition. */
  workerIds: readonly string[];
  /** Shown to operators reading the record: host name and process id. */
  host: string;
  pid: number;
  /** Endpoints to add to the record (slots taken since the last beat that are not in it yet). */
  addEndpoints: readonly EndpointRef[];
  /** Endpoints to take off the record (no slot of them held or given back lately). */
  removeEndpoints: readonly EndpointRef[];
  /** How long the record outlives the sender's last beat, ms. */
  recordTtlMs: number;
  /** A sender whose last beat is older than this is taken to be dead, ms. */
  lapseMs: number;
}

/** Result of {@link SenderRegistry.beat}. */
export interface SenderBeat {
  /** Redis's time of the beat, epoch ms. */
  nowMs: number;
  /** True when the record was missing (first beat, or taken over meanwhile): the caller writes its endpoints whole next time. */
  fresh: boolean;
  /** Ids of senders whose heartbeat lapsed (at most 20 a beat). */
  lapsed: string[];
}

/** What a sender's heartbeat record says (read for its takeover). */
export interface SenderRecord {
  /** Worker id per queue partition (undefined: none recorded). */
  workerIds: (string | undefined)[];
  endpoints: EndpointRef[];
}

const WORKER_FIELD = 'w';
const ENDPOINT_FIELD = 'e:';
const endpointField = (e: EndpointRef) => `${ENDPOINT_FIELD}${e.orgId}:${e.endpointId}`;

/**
 * The senders' heartbeats (README, "Crashes and restarts"): each sender process beats into one
 * sorted set and keeps a record of its workers' ids and of the endpoints it held slots of lately,
 * so a live sender can take over the work of one whose beat lapsed. Every key is tagged
 * `{senders}` (one slot on Redis Cluster); the takeover of jobs runs in each queue's own slot.
 */
export class SenderRegistry {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** Beats (Redis's clock), updates the record, and names the senders whose beat lapsed. */
  async beat(input: SenderBeatInput): Promise<SenderBeat> {
    const set: string[] = ['host', input.host, 'pid', String(input.pid)];
    input.workerIds.forEach((id, n) => set.push(`${WORKER_FIELD}${n}`, id));
    for (const e of input.addEndpoints) set.push(endpointField(e), '1');
    const del = input.removeEndpoints.map(endpointField);
    const [nowMs, fresh, ...lapsed] = (await beatScript.run(
      this.redis,
      [this.keys.senderHeartbeats(), this.keys.senderRecord(input.senderId), this.keys.senderTakeover(input.senderId)],
      [input.senderId, input.recordTtlMs, input.lapseMs, set.length / 2, ...set, ...del],
    )) as [number, number, ...string[]];
    return { nowMs: Number(nowMs), fresh: Number(fresh) === 1, lapsed: lapsed.map(String) };
  }

  /**
   * Adds one endpoint to a sender's record between beats (a slot of an endpoint not in it yet was
   * just taken), so a release the sender makes right after is known to its takeover.
   */
  async addEndpoint(senderId: string, endpoint: EndpointRef, recordTtlMs: number): Promise<void> {
    const record = this.keys.senderRecord(senderId);
    assertExec(await this.redis.multi().hset(record, endpointField(endpoint), '1').pexpire(record, recordTtlMs).exec());
  }

  /** Takes the one-time right to take over a sender (SET NX, for `guardMs`); false when another sender has it. */
  async claimTakeover(senderId: string, guardMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.senderTakeover(senderId), '1', 'PX', guardMs, 'NX')) === 'OK';
  }

  /** A sender's record, or null when it is gone (expired, or taken over already). */
  async read(senderId: string): Promise<SenderRecord | null> {
    const h = await this.redis.hgetall(this.keys.senderRecord(senderId));
    if (Object.keys(h).length === 0) return null;
    const workerIds: (string | undefined)[] = [];
    const endpoints: EndpointRef[] = [];
    for (const [field, value] of Object.entries(h)) {
      if (field.startsWith(ENDPOINT_FIELD)) {
        const [orgId, endpointId] = field.slice(ENDPOINT_FIELD.length).split(':');
        if (orgId && endpointId) endpoints.push({ orgId, endpointId });
      } else if (/^w\d+$/.test(field)) {
        workerIds[Number(field.slice(WORKER_FIELD.length))] = value;
      }
    }
    return { workerIds, endpoints };
  }

  /** Takes a sender off the heartbeats and deletes its record (a clean shutdown, or a finished takeover). */
  async forget(senderId: string): Promise<void> {
    await this.redis.zrem(this.keys.senderHeartbeats(), senderId);
    await this.redis.del(this.keys.senderRecord(senderId));
  }

  /**
   * Makes the active jobs of queue partition `partition` that worker `workerId` (a dead sender's)
   * holds locked, and any active job without a lock, stalled now (`lua/reclaim-jobs.lua`): the
   * partition's next stalled check moves them to wait. Returns their job (delivery) ids.
   */
  async reclaimJobs(partition: number, workerId: string): Promise<string[]> {
    const active = await this.redis.lrange(this.keys.queueActive(partition), 0, -1);
    if (active.length === 0) return [];
    const locks = active.map((jobId) => this.keys.deliveryJobLock(partition, jobId));
    const marked = (await reclaimScript.run(this.redis, [this.keys.queueStalled(partition), this.keys.queueStalledCheck(partition), ...locks], [workerId, ...active])) as string[];
    return marked.map(String);
  }
}
