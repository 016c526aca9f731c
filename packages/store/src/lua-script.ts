import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
}
