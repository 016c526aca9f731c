import type { RecordWithTtl } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { systemLookupAll, type LookupAll } from './destination-check.js';

/**
 * The part of `node:dns/promises`' `Resolver` the cache uses: A and AAAA queries that report each
 * record's TTL in seconds. Injectable so tests can count queries and choose TTLs.
 */
export interface DnsResolver {
  resolve4(hostname: string, options: { ttl: true }): Promise<RecordWithTtl[]>;
  resolve6(hostname: string, options: { ttl: true }): Promise<RecordWithTtl[]>;
}

/** Options of {@link createDnsCache}; every field has a production default. */
export interface DnsCacheOptions {
  /** Asks DNS directly for A and AAAA records. Default: a `Resolver` on the system's name servers, 2 s per query, 2 tries. */
  resolver?: DnsResolver;
  /**
   * Asked when DNS gives no address (a name only in /etc/hosts, a search-domain name, a DNS
   * outage). Its errors are the ones callers see. Default: `getaddrinfo` ({@link systemLookupAll}).
   */
  fallback?: LookupAll;
  /** Time source, ms since the epoch. Default `Date.now`. */
  clock?: { now(): number };
  /** Longest an answer is kept whatever its TTL says, ms. Default 300 000 (5 min). */
  maxTtlMs?: number;
  /** How long an answer of `fallback` (which carries no TTL) is kept, ms. Default 10 000. */
  fallbackTtlMs?: number;
  /** Most host names kept; the oldest entry goes first. Default 10 000. */
  maxEntries?: number;
}

/** A DNS cache shared by the pre-send destination check and the connect-time address guard. */
export interface DnsCache {
  /**
   * Every address of `hostname`, IPv4 first then IPv6, from the cache while the answer's TTL
   * lasts, else from DNS. Concurrent lookups of one name share one query. An IP address is
   * returned as is.
   * @throws the fallback's error (`code` `ENOTFOUND`, `EAI_AGAIN`, …) when no address is found.
   */
  lookupAll: LookupAll;
  /** Forgets every answer. */
  clear(): void;
}

interface Entry {
  addresses: string[];
  expiresAtMs: number;
}

/**
 * A DNS cache that honours TTLs: an answer is reused until the smallest TTL of its records runs
 * out (capped at `maxTtlMs`), so the check before an attempt and the socket's own lookup get one
 * answer, and a sender at full speed does not ask DNS for the same endpoint on every attempt.
 * jitter-45h's "resolve again before every attempt" holds in DNS terms: an answer is used only as
 * long as its owner said it may be. Caching never weakens address safety: the connect-time guard
 * (`address-guard.ts`) classifies every address the socket may dial, cached or not.
 *
 * DNS is asked first, so a name that DNS knows is not looked up in /etc/hosts; names DNS does
 * not know (hosts-file names, search-domain short names) are answered by `fallback`, as are
 * `localhost` and `*.localhost` (RFC 6761), which never go to DNS. Failures are not cached.
 */
export function createDnsCache(options: DnsCacheOptions = {}): DnsCache {
  const resolver = options.resolver ?? new Resolver({ timeout: 2_000, tries: 2 });
  const fallback = options.fallback ?? systemLookupAll;
  const clock = options.clock ?? { now: () => Date.now() };
  const maxTtlMs = options.maxTtlMs ?? 300_000;
  const fallbackTtlMs = options.fallbackTtlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<string[]>>();

  const remember = (key: string, addresses: string[], ttlMs: number) => {
    if (ttlMs <= 0) return;
    entries.delete(key);
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
    entries.set(key, { addresses, expiresAtMs: clock.now() + Math.min(ttlMs, maxTtlMs) });
  };

  const resolve = async (key: string): Promise<string[]> => {
    if (key !== 'localhost' && !key.endsWith('.localhost')) {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(key, { ttl: true }), resolver.resolve6(key, { ttl: true })]);
      const records = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
      if (records.length > 0) {
        const addresses = records.map((r) => r.address);
        remember(key, addresses, Math.min(...records.map((r) => r.ttl)) * 1000);
        return addresses;
      }
    }
    const addresses = await fallback(key);
    remember(key, addresses, fallbackTtlMs);
    return addresses;
  };

  return {
    async lookupAll(hostname) {
      if (isIP(hostname) !== 0) return [hostname];
      const key = hostname.toLowerCase().replace(/\.$/, '');
      const entry = entries.get(key);
      if (entry && entry.expiresAtMs > clock.now()) return [...entry.addresses];
      let pending = inFlight.get(key);
      if (!pending) {
        pending = resolve(key).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return [...(await pending)];
    },
    clear() {
      entries.clear();
    },
  };
}
