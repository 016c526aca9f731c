import { secretContext, SecretUnreadableError, type SecretBox } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import { LuaScript } from './lua-script.js';

const replaceFieldScript = LuaScript.load('replace-field-if-unchanged');

/**
 * The hash fields that hold secrets, by record kind: each is stored sealed by the process's
 * {@link SecretBox} (README, "Secrets at rest") with the context org id / record id / field (the
 * org's own id is its record id), and `npm run secrets:reencrypt` re-seals exactly these. A new
 * secret field of an endpoint or org is sealed with {@link sealField}, read with
 * {@link openSealedField}, and listed here.
 */
export const SEALED_FIELDS = {
  endpoint: ['secrets', 'requestSecrets'],
  org: ['preAttemptCheckSecret'],
} as const satisfies Record<'endpoint' | 'org', readonly string[]>;

/** Seals a field's plain value for its record (`orgId`, `recordId`: the endpoint's id, or the org's own). */
export function sealField(box: SecretBox, plain: string, orgId: string, recordId: string, field: string): string {
  return box.sealSecret(plain, secretContext(orgId, recordId, field));
}

/**
 * Opens a stored field value (a plain legacy value reads as it is); null when it does not open, so
 * a read of the record never throws over one secret: the sender records `internal:secret_unreadable`
 * for an attempt that needs it.
 */
export function openSealedField(box: SecretBox, stored: string, orgId: string, recordId: string, field: string): string | null {
  try {
    return box.openSecret(stored, secretContext(orgId, recordId, field));
  } catch (err) {
    if (err instanceof SecretUnreadableError) return null;
    throw err;
  }
}

/**
 * Replaces a hash field only while it still holds `expected` (one Lua compare-and-set); true when
 * it did.
 */
export async function replaceFieldIfUnchanged(redis: RedisClient, key: string, field: string, expected: string, next: string): Promise<boolean> {
  return (await replaceFieldScript.run(redis, [key], [field, expected, next])) === 1;
}
