import type { EventTypeDefinition } from '@postern/shared';
import type { KeySchema } from './keys.js';
import { replaceFieldIfUnchanged } from './sealed-fields.js';
import type { RedisClient } from './redis-connection.js';

/** Parses a stored catalog entry; null for a missing or unreadable one. */
function parseDefinition(raw: string | null | undefined): EventTypeDefinition | null {
  if (!raw) return null;
  try {
    const d = JSON.parse(raw) as EventTypeDefinition;
    return typeof d?.name === 'string' ? d : null;
  } catch {
    return null;
  }
}

/**
 * An org's event catalog: one hash per org (`orgEventTypes`), the type's name → its definition as
 * JSON. Reading one type for a new event is one `HGET`; a change is a compare-and-set of its field
 * (`replace-field-if-unchanged.lua`), so two racing PATCHes never lose one silently and each
 * change has its own version.
 */
export class EventTypeRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** Adds a type; false when the org already has one of that name (nothing written). */
  async create(orgId: string, definition: EventTypeDefinition): Promise<boolean> {
    return (await this.redis.hsetnx(this.keys.orgEventTypes(orgId), definition.name, JSON.stringify(definition))) === 1;
  }

  /** One type, or null. */
  async get(orgId: string, name: string): Promise<EventTypeDefinition | null> {
    return parseDefinition(await this.redis.hget(this.keys.orgEventTypes(orgId), name));
  }

  /** Every type of the org, by name. Catalogs are small (a few hundred types at most), so one `HGETALL`. */
  async list(orgId: string): Promise<EventTypeDefinition[]> {
    const all = await this.redis.hgetall(this.keys.orgEventTypes(orgId));
    return Object.values(all)
      .map(parseDefinition)
      .filter((d): d is EventTypeDefinition => d !== null)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Changes a type with `change(current)` → next; retried on a concurrent change (a few times).
   * Resolves with the stored result, or null when the type does not exist.
   */
  async update(orgId: string, name: string, change: (current: EventTypeDefinition) => EventTypeDefinition): Promise<EventTypeDefinition | null> {
    const key = this.keys.orgEventTypes(orgId);
    for (let round = 0; round < 5; round++) {
      const raw = await this.redis.hget(key, name);
      const current = parseDefinition(raw);
      if (!current || raw === null) return null;
      const next = change(current);
      if (await replaceFieldIfUnchanged(this.redis, key, name, raw, JSON.stringify(next))) return next;
    }
    throw new Error(`event type ${name}: changed concurrently too often`);
  }

  /** Removes a type; false when there was none. */
  async delete(orgId: string, name: string): Promise<boolean> {
    return (await this.redis.hdel(this.keys.orgEventTypes(orgId), name)) === 1;
  }
}
