import { isSealed, sealedKeyId, secretContext, SecretUnreadableError, type SecretBox } from '@postern/shared';
import type { KeySchema } from './keys.js';
import { redisReady, type RedisClient } from './redis-connection.js';
import { replaceFieldIfUnchanged, SEALED_FIELDS } from './sealed-fields.js';

/** The text sealed in {@link KeySchema.secretsCheck}; what opening it must give back. */
const CHECK_TEXT = 'postern-secrets-check';
const CHECK_FIELD = 'value';
const CHECK_CONTEXT = secretContext('instance', 'secrets-check', CHECK_FIELD);

/**
 * What {@link checkSecretsKey} found: `created` (first start with a key: the check value was
 * written), `opened` (the keys open what is stored), `none` (no key, nothing sealed yet).
 */
export type SecretsKeyCheck = 'created' | 'opened' | 'none';

/** The stored secrets do not open with this process's keys: a configuration error, one line naming the setting. */
export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyError';
  }
}

/**
 * Proves at start-up that the process's keys open the secrets stored under this prefix: opens the
 * check value ({@link KeySchema.secretsCheck}), writing it first (sealed with the current key) when
 * there is none. A wrong `SECRETS_KEY` thus stops start-up instead of signing nothing.
 *
 * @throws SecretsKeyError, one line naming the setting and the key id, e.g. `SECRETS_KEY: cannot
 *   open stored secrets sealed with key id k1 (a different key under that id?)`; Redis errors as they come
 */
export async function checkSecretsKey(redis: RedisClient, keys: KeySchema, box: SecretBox): Promise<SecretsKeyCheck> {
  const key = keys.secretsCheck();
  let stored = await redis.hget(key, CHECK_FIELD);
  if (stored === null) {
    if (box.currentKeyId === null) return 'none';
    // HSETNX: of two processes starting at once, one writes; both then open the same value.
    if ((await redis.hsetnx(key, CHECK_FIELD, box.sealSecret(CHECK_TEXT, CHECK_CONTEXT))) === 1) return 'created';
    stored = (await redis.hget(key, CHECK_FIELD)) ?? '';
  }
  const keyId = sealedKeyId(stored);
  try {
    if (box.openSecret(stored, CHECK_CONTEXT) === CHECK_TEXT) return 'opened';
  } catch (err) {
    if (!(err instanceof SecretUnreadableError)) throw err;
    if (err.reason === 'unknown_key') {
      throw new SecretsKeyError(
        box.currentKeyId === null
          ? `SECRETS_KEY: is required: stored secrets are sealed with key id ${keyId}`
          : `SECRETS_KEY_PREVIOUS: has no key id ${keyId}, which sealed stored secrets (SECRETS_KEY_ID is ${box.currentKeyId})`,
      );
    }
  }
  throw new SecretsKeyError(`SECRETS_KEY: cannot open stored secrets sealed with key id ${keyId ?? '?'} (a different key under that id?)`);
}

/**
 * {@link checkSecretsKey} until Redis answers: a Redis error is retried every `retryMs` (default
 * 1000), a {@link SecretsKeyError} rejects. What both apps' `main.ts` run at start-up.
 */
export async function verifySecretsKey(redis: RedisClient, keys: KeySchema, box: SecretBox, retryMs = 1000): Promise<SecretsKeyCheck> {
  for (;;) {
    try {
      return await checkSecretsKey(redis, keys, box);
    } catch (err) {
      if (err instanceof SecretsKeyError) throw err;
      await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
    }
  }
}

/** How long start-up waits for {@link verifySecretsKey} while Redis answers, ms (then it goes on checking in the background). */
const START_CHECK_WAIT_MS = 3000;

/**
 * Both apps' start-up check of `SECRETS_KEY` (README, "Secrets at rest"): warns when no key is set
 * (secrets in plain text, development only), then runs {@link verifySecretsKey}. A key that cannot
 * open what is stored prints one line (`<appName>: SECRETS_KEY: …`) and exits 1. Resolves once the
 * check has answered or, with Redis reachable, after at most 3 s; with Redis unreachable at once
 * (the check goes on in the background until Redis answers; meanwhile a secret that does not open
 * is the sender's fault `internal:secret_unreadable`, retried and never sent unsigned).
 */
export async function checkSecretsKeyAtStart(deps: {
  redis: RedisClient;
  keys: KeySchema;
  box: SecretBox;
  appName: string;
  logger: { info(obj: object, msg: string): void; warn(msg: string): void };
}): Promise<void> {
  const { box, logger } = deps;
  if (!box.currentKeyId) logger.warn('SECRETS_KEY is not set: secrets are stored in plain text (development only; production requires it)');
  const check = verifySecretsKey(deps.redis, deps.keys, box).then(
    (result) => {
      if (result === 'created') logger.info({ keyId: box.currentKeyId }, 'secrets check value sealed with SECRETS_KEY');
    },
    (err: unknown) => {
      process.stderr.write(`${deps.appName}: ${err instanceof SecretsKeyError ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
  if (await redisReady(deps.redis)) await Promise.race([check, new Promise((resolve) => setTimeout(resolve, START_CHECK_WAIT_MS).unref())]);
}

/** What {@link resealSecrets} did, by stored value. */
export interface ResealCounts {
  /** Keys the SCAN visited under the prefix. */
  keysScanned: number;
  /** Secret values read (every sealed field of every org and endpoint, and the check value). */
  values: number;
  /** Already sealed with the current key: left as they are. */
  alreadyCurrent: number;
  /** Sealed with a previous key, now with the current one. */
  resealed: number;
  /** Plain text (written before sealing), now sealed. */
  sealedFromPlain: number;
  /** Sealed with a key this process does not hold, or not opening: left as they are. */
  unreadable: number;
  /** Changed by Postern while being re-sealed, five times in a row: left for the next run. */
  contended: number;
}

/**
 * Moves every stored secret under the prefix to the current key (`npm run secrets:reencrypt`):
 * SCANs every master node (Redis Cluster too) for org and endpoint hashes and the check value, and
 * re-seals each field of {@link SEALED_FIELDS} not yet sealed with the current key — plain legacy
 * values included — with a compare-and-set per value, so a change Postern makes meanwhile (a
 * rotation) is re-read, never overwritten. Idempotent (a second run changes nothing) and
 * resumable (an interrupted run is finished by the next).
 *
 * @param onProgress - told the counts after each SCAN page
 * @throws Error when the box has no current key
 */
export async function resealSecrets(redis: RedisClient, keys: KeySchema, box: SecretBox, onProgress?: (counts: ResealCounts) => void): Promise<ResealCounts> {
  if (box.currentKeyId === null) throw new Error('SECRETS_KEY: is required to re-seal secrets');
  const counts: ResealCounts = { keysScanned: 0, values: 0, alreadyCurrent: 0, resealed: 0, sealedFromPlain: 0, unreadable: 0, contended: 0 };
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const P = esc(keys.prefix);
  const orgKey = new RegExp(`^${P}:\\{o:([^}]+)\\}:org$`);
  const endpointKey = new RegExp(`^${P}:\\{o:([^}]+)\\}:endpoint:([^:]+)$`);

  const reseal = async (key: string, field: string, context: string) => {
    for (let round = 0; round < 5; round++) {
      const stored = await redis.hget(key, field);
      if (stored === null) return;
      if (round === 0) counts.values += 1;
      if (box.isCurrent(stored)) {
        counts.alreadyCurrent += 1;
        return;
      }
      let plain: string;
      try {
        plain = box.openSecret(stored, context);
      } catch (err) {
        if (!(err instanceof SecretUnreadableError)) throw err;
        counts.unreadable += 1;
        return;
      }
      if (await replaceFieldIfUnchanged(redis, key, field, stored, box.sealSecret(plain, context))) {
        counts[isSealed(stored) ? 'resealed' : 'sealedFromPlain'] += 1;
        return;
      }
    }
    counts.contended += 1;
  };

  const visit = async (key: string) => {
    if (key === keys.secretsCheck()) return reseal(key, CHECK_FIELD, CHECK_CONTEXT);
    const org = orgKey.exec(key);
    if (org && key === keys.org(org[1]!)) {
      for (const field of SEALED_FIELDS.org) await reseal(key, field, secretContext(org[1]!, org[1]!, field));
      return;
    }
    const endpoint = endpointKey.exec(key);
    if (endpoint && key === keys.endpoint(endpoint[1]!, endpoint[2]!)) {
      // The record names itself: a key whose hash holds another id is not an endpoint record.
      if ((await redis.hget(key, 'id')) !== endpoint[2]) return;
      for (const field of SEALED_FIELDS.endpoint) await reseal(key, field, secretContext(endpoint[1]!, endpoint[2]!, field));
    }
  };

  const nodes: RedisClient[] = 'nodes' in redis ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, page] = await node.scan(cursor, 'MATCH', `${keys.prefix}:*`, 'COUNT', 1000);
      cursor = next;
      counts.keysScanned += page.length;
      // Through `redis`, not the node: on a cluster each command goes to its key's slot owner.
      for (const key of page) await visit(key);
      onProgress?.({ ...counts });
    } while (cursor !== '0');
  }
  return counts;
}
