/// <reference path="./cluster-key-slot.d.ts" />
import type { DurabilityConfirmation } from '@postern/shared';
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './redis-connection.js';

/**
 * The connection of `redis` that wrote `key`: the client itself when standalone (or Sentinel), else
 * the cluster's connection to the primary serving the key's slot. `WAIT` and `WAITAOF` count the
 * writes made on one connection, so they must go on that one.
 */
function connectionOfKey(redis: RedisClient, key: string): Redis {
  if (!('slots' in redis)) return redis;
  const cluster = redis as Cluster;
  const nodeKey = cluster.slots[calculateSlot(key)]?.[0];
  const node = cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey);
  if (!node) throw new Error(`no primary known for the slot of ${key}`);
  return node;
}

/** Connections seen by {@link markWrites}: how often each has closed since. */
const closes = new WeakMap<Redis, { count: number }>();

function closesOf(node: Redis): { count: number } {
  let entry = closes.get(node);
  if (!entry) {
    const counter = { count: 0 };
    node.on('close', () => {
      counter.count += 1;
    });
    closes.set(node, counter);
    entry = counter;
  }
  return entry;
}

/** Which connection a write of `key` is about to go on, and how often it had closed: see {@link markWrites}. */
export interface WriteMark {
  node: Redis;
  closes: number;
}

/**
 * Taken before writing `key`: `WAIT` only speaks for the writes of the very connection it runs on,
 * so a connection that closed and reconnected (a failover: to another server) between the write
 * and the `WAIT` confirms nothing. {@link confirmWrites} given this mark answers 0 replicas then.
 */
export function markWrites(redis: RedisClient, key: string): WriteMark {
  const node = connectionOfKey(redis, key);
  return { node, closes: closesOf(node).count };
}

/**
 * Asks the primary that holds `key` (over the connection that wrote it) how durable its writes
 * are (none, when `mark` shows the connection closed since the writes began): how many replicas have them (`WAIT replicas timeoutMs`) or, with `fsync`, whether its AOF
 * has them on disk (`WAITAOF 1 0 timeoutMs`, Redis ≥ 7.2). Rejects on Redis trouble.
 */
export async function confirmWrites(redis: RedisClient, key: string, opts: { replicas: number; timeoutMs: number; fsync: boolean }, mark?: WriteMark, nowMs: () => number = Date.now): Promise<DurabilityConfirmation> {
  const node = connectionOfKey(redis, key);
  const intact = () => mark === undefined || (mark.node === node && closesOf(node).count === mark.closes);
  // A WAIT holds up every command behind it on its connection. A primary that just fell short
  // (no replica after a failover) is not waited on again for SHORT_PRIMARY_MS, but for one probe
  // at a time: its other answers are 503 at once instead of one per wait.
  const state = waitsOf(node);
  if (nowMs() < state.shortUntilMs && state.inFlight) return { replicas: 0, localFsynced: false };
  const answer = await sharedWait(node, state, opts);
  state.shortUntilMs = answer.short ? nowMs() + SHORT_PRIMARY_MS : 0;
  if (opts.fsync) return { replicas: 0, localFsynced: answer.count >= 1 && intact() };
  return { replicas: intact() ? answer.count : 0, localFsynced: false };
}

interface NodeWaits {
  shortUntilMs: number;
  /** The WAIT (or WAITAOF) on the wire. */
  inFlight: Promise<{ count: number; short: boolean }> | null;
  /** The one sent once it returns, shared by everyone who asked meanwhile. */
  next: Promise<{ count: number; short: boolean }> | null;
}
const waits = new WeakMap<Redis, NodeWaits>();

function waitsOf(node: Redis): NodeWaits {
  let state = waits.get(node);
  if (!state) {
    state = { shortUntilMs: 0, inFlight: null, next: null };
    waits.set(node, state);
  }
  return state;
}

/**
 * One WAIT confirms every write its connection made before it, so callers share them: with one on
 * the wire, whoever asks joins the next one (sent when it returns, after their writes), and that
 * one is sent once for all of them. At most one WAIT per connection is ever on the wire.
 */
function sharedWait(node: Redis, state: NodeWaits, opts: { replicas: number; timeoutMs: number; fsync: boolean }): Promise<{ count: number; short: boolean }> {
  const send = (): Promise<{ count: number; short: boolean }> => {
    const sent = (async () => {
      if (opts.fsync) {
        const [local] = (await node.call('WAITAOF', '1', '0', String(opts.timeoutMs))) as [number, number];
        return { count: local, short: local < 1 };
      }
      const replicas = (await node.call('WAIT', String(opts.replicas), String(opts.timeoutMs))) as number;
      return { count: replicas, short: replicas < opts.replicas };
    })();
    state.inFlight = sent;
    const done = () => {
      if (state.inFlight === sent) state.inFlight = null;
    };
    sent.then(done, done);
    return sent;
  };
  if (!state.inFlight) return send();
  if (!state.next) {
    const settle = () => {
      state.next = null;
      return send();
    };
    state.next = state.inFlight.then(settle, settle);
  }
  return state.next;
}

/** After a primary fell short of the durability asked, how long its answers are 503 without waiting, but for one probe at a time, ms. */
export const SHORT_PRIMARY_MS = 1000;

/**
 * A write whose only purpose is to be waited on: an idempotent replay wrote nothing itself, and
 * `WAIT` counts a connection's own writes. The replication stream of a primary is in order, so
 * once this reached the replicas, so did everything written before it (the original event).
 */
export async function touchForConfirmation(redis: RedisClient, key: string, nowMs: number): Promise<void> {
  await connectionOfKey(redis, key).set(key, String(nowMs), 'PX', 60_000);
}
