import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AttemptIds, EndpointRef, SenderRegistry } from '@postern/store';
import type { Logger } from 'pino';
import { takeOverSender, type TakeoverDeps } from './takeover.js';

/** How long a sender's record outlives its last beat, ms: long enough for a late takeover to read it. */
const RECORD_TTL_MS = 10 * 60_000;

/**
 * Every this many beats, the sender calls again the lines of the endpoints it worked lately
 * ({@link LINE_SWEEP_KEEP_MS}): a wake-up lost to Redis trouble (the release was stored, promoting
 * the woken jobs failed) then costs a few seconds, not the park safety delay.
 */
export const LINE_SWEEP_EVERY_BEATS = 2;
/** An endpoint is swept for this long after this sender last took, gave back or was refused one of its slots, ms. */
export const LINE_SWEEP_KEEP_MS = 60_000;

/** Dependencies of {@link startHeartbeat}: the takeover's, plus the timing. */
export interface HeartbeatDeps extends TakeoverDeps {
  registry: SenderRegistry;
  config: {
    /** How often the sender beats, ms (`HEARTBEAT_INTERVAL_MS`, default 1000). */
    intervalMs: number;
    /** A sender not heard from for this long is taken over, ms (`TAKEOVER_AFTER_MS`, default 5000; more than twice `intervalMs`). */
    lapseMs: number;
  };
}

/** A sender process's heartbeat: beats, watches the others' and takes over any that lapsed. */
export interface SenderHeartbeat {
  /** This process's sender id (a random UUID), as in its record and in logs. */
  readonly senderId: string;
  /** Told when an attempt took a concurrency slot: its endpoint goes into the record (at once, when new). */
  slotTaken(ids: AttemptIds): void;
  /** Told when an attempt gave its slot back. */
  slotReturned(deliveryId: string): void;
  /** Told when a delivery was refused a slot and parked: its endpoint's line is swept for a while. */
  parked(ref: EndpointRef): void;
  /** Calls the recently worked endpoints' lines now and wakes whom they name; returns how many were woken. For tests. */
  sweepOnce(): Promise<number>;
  /** One beat now (and any takeover it starts); for tests. */
  beatOnce(): Promise<void>;
  /**
   * Stops beating. `forget`: take this sender off the heartbeats (a shutdown that finished its
   * attempts); else its beat lapses and another sender takes its abandoned attempts over.
   */
  stop(opts: { forget: boolean }): Promise<void>;
}

interface EndpointEntry {
  ref: EndpointRef;
  holding: number;
  lastUsedMs: number;
  /** In the record in Redis (or on its way there). */
  written: boolean;
}

/**
 * Starts the heartbeat of one sender process (README, "Crashes and restarts"). Every `intervalMs`
 * it beats (Redis's clock) with its workers' ids and the endpoints it held slots of within the last
 * `lapseMs`; any sender whose beat is older than `lapseMs` is taken over ({@link takeOverSender})
 * by the first live sender to see it. A sender killed with deliveries in flight thus has them run
 * again after about `lapseMs` + `intervalMs`, instead of after its jobs' locks expire. Every
 * {@link LINE_SWEEP_EVERY_BEATS} beats it also calls again the lines of the endpoints it worked in
 * the last {@link LINE_SWEEP_KEEP_MS} and wakes the parked deliveries that have room, so a lost
 * wake-up of a live sender is found within seconds too.
 */
export function startHeartbeat(deps: HeartbeatDeps): SenderHeartbeat {
  const senderId = randomUUID();
  const { intervalMs, lapseMs } = deps.config;
  const endpoints = new Map<string, EndpointEntry>();
  const endpointOf = new Map<string, string>();
  let removals = new Map<string, EndpointRef>();
  const takingOver = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let beating: Promise<void> | null = null;
  // Endpoints worked lately, for the line sweep: key → ref and when last touched.
  const recent = new Map<string, { ref: EndpointRef; touchedMs: number }>();
  let beats = 0;
  let sweeping: Promise<number> | null = null;
  const touch = (ref: EndpointRef) => {
    recent.set(`${ref.orgId}:${ref.endpointId}`, { ref, touchedMs: deps.clock.now() });
  };

  const sweep = async (): Promise<number> => {
    const now = deps.clock.now();
    let woken = 0;
    for (const [key, entry] of recent) {
      if (now - entry.touchedMs > LINE_SWEEP_KEEP_MS) {
        recent.delete(key);
        continue;
      }
      const endpoint = await deps.store.endpoints.get(entry.ref.orgId, entry.ref.endpointId);
      if (!endpoint) {
        recent.delete(key);
        continue;
      }
      const ids = await deps.store.leases.callLine({ ...entry.ref, ...endpoint.policy.concurrency, nowMs: deps.clock.now() });
      woken += ids.length;
      await deps.wake(entry.ref.orgId, ids);
    }
    return woken;
  };
  const sweepOnce = async () => {
    if (!sweeping) sweeping = sweep().finally(() => (sweeping = null));
    return sweeping;
  };

  const write = (entry: EndpointEntry) => {
    entry.written = true;
    // Sent before the attempt's finish (same connection, in order), so a release it makes is known.
    deps.registry.addEndpoint(senderId, entry.ref, RECORD_TTL_MS).catch(() => {
      entry.written = false;
    });
  };

  const takeOver = (deadId: string) => {
    if (takingOver.has(deadId)) return;
    takingOver.add(deadId);
    takeOverSender(deps, deadId)
      .then((result) => {
        if (result) deps.logger.warn({ senderId, deadSenderId: deadId, ...result }, 'took over a sender whose heartbeat lapsed: its attempts in flight run again');
      })
      .catch((err: Error) => deps.logger.warn({ deadSenderId: deadId, err: err.message }, 'takeover of a lapsed sender failed; it is tried again'))
      .finally(() => takingOver.delete(deadId));
  };

  const beat = async () => {
    const now = deps.clock.now();
    const add: EndpointRef[] = [];
    for (const [key, entry] of endpoints) {
      if (entry.holding === 0 && now - entry.lastUsedMs > lapseMs) {
        endpoints.delete(key);
        removals.set(key, entry.ref);
      } else if (!entry.written) {
        entry.written = true;
        add.push(entry.ref);
      }
    }
    const removing = removals;
    removals = new Map();
    try {
      const result = await deps.registry.beat({
        senderId,
        workerIds: deps.workers.map((w) => w.id),
        host: hostname(),
        pid: process.pid,
        addEndpoints: add,
        removeEndpoints: [...removing.values()],
        recordTtlMs: RECORD_TTL_MS,
        lapseMs,
      });
      // The record was missing (first beat, or this sender was taken over): write it whole next time.
      if (result.fresh) for (const entry of endpoints.values()) entry.written = false;
      for (const deadId of result.lapsed) takeOver(deadId);
      beats += 1;
      if (beats % LINE_SWEEP_EVERY_BEATS === 0 && recent.size > 0 && !sweeping) {
        sweepOnce().catch((err: Error) => deps.logger.warn({ err: err.message }, 'line sweep failed; it is tried again'));
      }
    } catch (err) {
      for (const ref of add) {
        const entry = endpoints.get(`${ref.orgId}:${ref.endpointId}`);
        if (entry) entry.written = false;
      }
      for (const [key, ref] of removing) if (!endpoints.has(key)) removals.set(key, ref);
      deps.logger.warn({ err: (err as Error).message }, 'sender heartbeat failed');
    }
  };

  const beatOnce = async () => {
    // One beat at a time: a slow Redis must not stack them up.
    if (!beating) beating = beat().finally(() => (beating = null));
    await beating;
  };
  const loop = () => {
    if (stopped) return;
    timer = setTimeout(() => void beatOnce().then(loop), intervalMs);
    timer.unref();
  };
  void beatOnce().then(loop);

  return {
    senderId,
    slotTaken(ids) {
      if (endpointOf.has(ids.deliveryId)) return;
      const key = `${ids.orgId}:${ids.endpointId}`;
      endpointOf.set(ids.deliveryId, key);
      let entry = endpoints.get(key);
      if (!entry) {
        entry = { ref: { orgId: ids.orgId, endpointId: ids.endpointId }, holding: 0, lastUsedMs: 0, written: false };
        endpoints.set(key, entry);
        removals.delete(key);
        if (!stopped) write(entry);
      }
      entry.holding += 1;
      entry.lastUsedMs = deps.clock.now();
      touch(entry.ref);
    },
    slotReturned(deliveryId) {
      const key = endpointOf.get(deliveryId);
      if (key === undefined) return;
      endpointOf.delete(deliveryId);
      const entry = endpoints.get(key);
      if (!entry) return;
      entry.holding = Math.max(0, entry.holding - 1);
      entry.lastUsedMs = deps.clock.now();
      touch(entry.ref);
    },
    parked: touch,
    sweepOnce,
    beatOnce,
    async stop({ forget }) {
      stopped = true;
      if (timer) clearTimeout(timer);
      await beating?.catch(() => undefined);
      await sweeping?.catch(() => undefined);
      if (forget) await deps.registry.forget(senderId).catch((err: Error) => deps.logger.warn({ err: err.message }, 'sender heartbeat not removed; it lapses and is taken over'));
    },
  };
}
