import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-connection.js';

/**
 * A Lua script from this folder, run with EVALSHA and loaded on first use (NOSCRIPT fallback),
 * so a Redis restart or SCRIPT FLUSH costs one extra round trip, never an error.
 */
export class LuaScript {
  readonly sha: string;

  private constructor(readonly name: string, readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /**
   * Loads `lua/<name>.lua` next to this file. A line `--- @include "x"` is replaced by
   * `lua/includes/x.lua`, so scripts share fragments (as BullMQ's commands do) instead of copies.
   * Throws when a file is missing.
   */
  static load(name: string): LuaScript {
    const read = (file: string) => readFileSync(new URL(`./lua/${file}.lua`, import.meta.url), 'utf8');
    const lua = read(name).replace(/^--- @include "([a-z-]+)"$/gm, (_line, include: string) => read(`includes/${include}`));
    return new LuaScript(name, lua);
  }

  /** Runs the script; rejects with Redis's error (connection errors included). */
  async run(redis: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      // On a cluster the reply may come wrapped ("Too many Cluster redirections. Last error:
      // ReplyError: NOSCRIPT …"): a replica promoted by a failover has an empty script cache.
      if (err instanceof Error && err.message.includes('NOSCRIPT')) {
        return redis.eval(this.lua, keys.length, ...keys, ...args);
      }
      throw err;
    }
  }

  /**
   * Queues the script in a transaction (`redis.multi()`) as EVAL with its text: a transaction
   * cannot fall back from EVALSHA when the script is not loaded, and the commands queued with it
   * would run without it. On a Redis Cluster its keys must be in the transaction's slot.
   */
  queueIn(multi: ChainableCommander, keys: readonly string[], args: readonly (string | number)[]): void {
    multi.eval(this.lua, keys.length, ...keys, ...args);
  }

  /**
   * Runs the script once per call, in order, in one round trip (a pipeline: on a Redis Cluster
   * every key of every call must be in one slot). Each call is atomic on its own; together they
   * are not. Resolves with each call's reply, or the error Redis answered it with, in order; calls
   * refused with NOSCRIPT (a flushed script cache) are run again with EVAL, in order, in one more
   * round trip. Rejects when the pipeline could not be sent or answered at all (the connection is
   * gone), in which case any of the calls may or may not have run.
   */
  async runMany(redis: RedisClient, calls: readonly { keys: readonly string[]; args: readonly (string | number)[] }[]): Promise<unknown[]> {
    if (calls.length === 0) return [];
    const pipeline = redis.pipeline();
    for (const { keys, args } of calls) pipeline.evalsha(this.sha, keys.length, ...keys, ...args);
    const replies = await execReplies(pipeline, calls.length);
    const missing = replies.flatMap((r, i) => (r instanceof Error && r.message.includes('NOSCRIPT') ? [i] : []));
    if (missing.length === 0) return replies;
    const again = redis.pipeline();
    for (const i of missing) again.eval(this.lua, calls[i]!.keys.length, ...calls[i]!.keys, ...calls[i]!.args);
    const rerun = await execReplies(again, missing.length);
    missing.forEach((i, n) => (replies[i] = rerun[n]));
    return replies;
  }
}

/** Each command's reply of an executed pipeline, or its error. */
async function execReplies(pipeline: ReturnType<RedisClient['pipeline']>, count: number): Promise<unknown[]> {
  const results = await pipeline.exec();
  if (!results || results.length !== count) throw new Error('pipeline was not answered');
  return results.map(([err, reply]) => err ?? reply);
}
