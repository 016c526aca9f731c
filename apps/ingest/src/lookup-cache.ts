import type { OrgSnapshot, Store } from '@postern/store';

/** Default of `LOOKUP_CACHE_TTL_MS`: how long a cached lookup is used before it is read again, ms. */
export const DEFAULT_LOOKUP_CACHE_TTL_MS = 10_000;
/** Default of `LOOKUP_CACHE_MAX_ENTRIES`: how many API keys the cache holds at most. */
export const DEFAULT_LOOKUP_CACHE_MAX_ENTRIES = 10_000;

/**
 * An API key's lookup as of its org's version: the org, the key and the org's parsed endpoints.
 * The endpoints' health counters (`consecutiveFailures`, `lastSuccessAt`…) are as of the read: the
 * sender changes them without a version bump, so they are for fan-out only, never for an answer.
 */
export interface KeyLookup extends OrgSnapshot {
  /** The org the key belongs to. */
  orgId: string;
}

interface Entry {
  lookup: KeyLookup;
  loadedAtMs: number;
}

/**
 * Ingest's in-process cache of what an API request needs before it does anything: which org an
 * API key belongs to, the key's record, the org, and the org's endpoints parsed once (policy,
 * event-type filter, secrets). Instead of five to seven reads, a request whose key is cached
 * costs one `GET` of the org's version ({@link KeySchema.orgVersion}); every change that matters
 * bumps that version in the same transaction, so a change is seen by the very next request, in
 * this process or any other. An entry is re-read when the version moved, when it is older than
 * `ttlMs` (which bounds how long a change made without a version bump could go unseen) and for
 * keys not yet cached; at most `maxEntries` keys are held, the oldest loaded dropped first.
 * `ttlMs` 0 turns caching off (every request reads everything, two or three round trips).
 */
export class LookupCache {
  private readonly entries = new Map<string, Entry>();
  /** Lookups by org id (platform-key requests), apart from {@link entries} so neither evicts the other. */
  private readonly orgEntries = new Map<string, Entry>();

  constructor(
    private readonly deps: { store: Pick<Store, 'orgSnapshots'>; clock: { now(): number } },
    private readonly options: { ttlMs: number; maxEntries: number },
  ) {}

  /**
   * The lookup of an API key by its SHA-256 (hex), current as of the org's version read now; null
   * when the key is unknown or revoked. A key that predates records (`apiKey.key === null`) is
   * returned but not cached, so that its record is read once it has been adopted.
   * Rejects with Redis's error when Redis is unreachable.
   */
  async lookup(keyHash: string): Promise<KeyLookup | null> {
    const { orgSnapshots } = this.deps.store;
    const now = this.deps.clock.now();
    const cached = this.entries.get(keyHash);
    if (cached && now - cached.loadedAtMs < this.options.ttlMs) {
      if ((await orgSnapshots.version(cached.lookup.orgId)) === cached.lookup.version) return cached.lookup;
    }
    // A key never changes org, so a stale entry still says where to look.
    const orgId = cached?.lookup.orgId ?? (await orgSnapshots.orgIdOfApiKey(keyHash));
    if (!orgId) return null;
    const snapshot = await orgSnapshots.read(orgId, keyHash);
    if (!snapshot.apiKey) {
      this.entries.delete(keyHash);
      return null;
    }
    const lookup: KeyLookup = { ...snapshot, orgId };
    if (this.options.ttlMs > 0 && snapshot.apiKey.key !== null) {
      // Re-inserted at the end, so the first key in the map is the one loaded longest ago.
      this.entries.delete(keyHash);
      if (this.entries.size >= this.options.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
      this.entries.set(keyHash, { lookup, loadedAtMs: now });
    }
    return lookup;
  }

  /**
   * What a platform-key request acting for `orgId` needs: the org (null when there is none) and its
   * endpoints, current as of the org's version read now; the same caching rules as {@link lookup},
   * by org id. `apiKey` is always null. Rejects with Redis's error when Redis is unreachable.
   */
  async lookupOrg(orgId: string): Promise<KeyLookup> {
    const { orgSnapshots } = this.deps.store;
    const now = this.deps.clock.now();
    const cached = this.orgEntries.get(orgId);
    if (cached && now - cached.loadedAtMs < this.options.ttlMs) {
      if ((await orgSnapshots.version(orgId)) === cached.lookup.version) return cached.lookup;
    }
    const lookup: KeyLookup = { ...(await orgSnapshots.readOrg(orgId)), orgId };
    this.orgEntries.delete(orgId);
    if (this.options.ttlMs > 0 && lookup.org !== null) {
      if (this.orgEntries.size >= this.options.maxEntries) {
        const oldest = this.orgEntries.keys().next();
        if (!oldest.done) this.orgEntries.delete(oldest.value);
      }
      this.orgEntries.set(orgId, { lookup, loadedAtMs: now });
    }
    return lookup;
  }

  /** How many API keys are cached now. */
  get size(): number {
    return this.entries.size;
  }
}
