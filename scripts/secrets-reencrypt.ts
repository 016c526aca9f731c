// Moves every stored secret to the current key (README, "Secrets at rest"): re-seals values
// sealed with a key of SECRETS_KEY_PREVIOUS, and seals plain-text ones written before sealing.
// Safe while Postern runs (a compare-and-set per value), idempotent and resumable (run it again).
//   SECRETS_KEY=… SECRETS_KEY_ID=… SECRETS_KEY_PREVIOUS=old:… REDIS_URL=… REDIS_PREFIX=… npm run secrets:reencrypt
// Exit code 0 when every secret is now sealed with SECRETS_KEY_ID, 1 when some could not be opened
// (a key missing from SECRETS_KEY_PREVIOUS) or kept changing, 2 on a configuration error.
import { commonConfigShape, createSecretBox, parseEnvConfig } from '@postern/shared';
import { connectRedis, createKeySchema, redisTargetOf, resealSecrets } from '@postern/store';
import { z } from 'zod';

let config: ReturnType<typeof parseEnvConfig<z.ZodObject<typeof commonConfigShape>>>;
try {
  config = parseEnvConfig(z.object(commonConfigShape), process.env);
  if (!config.secretKeyring.current) throw new Error('invalid configuration: SECRETS_KEY: is required (the key to seal every secret with)');
} catch (err) {
  console.error(`secrets:reencrypt: ${(err as Error).message}`);
  process.exit(2);
}
const box = createSecretBox(config.secretKeyring);
const redis = connectRedis(redisTargetOf(config), 'worker');
const keys = createKeySchema(config.REDIS_PREFIX);
let exitCode = 0;
try {
  const counts = await resealSecrets(redis, keys, box);
  console.log(
    `secrets:reencrypt: prefix ${config.REDIS_PREFIX}, key id ${box.currentKeyId}: ${counts.values} secrets in ${counts.keysScanned} keys — ` +
      `${counts.resealed} re-sealed from an older key, ${counts.sealedFromPlain} sealed from plain text, ${counts.alreadyCurrent} already current, ` +
      `${counts.unreadable} unreadable, ${counts.contended} changing (run again)`,
  );
  if (counts.unreadable > 0 || counts.contended > 0) exitCode = 1;
} catch (err) {
  console.error(`secrets:reencrypt: ${(err as Error).message}`);
  exitCode = 1;
} finally {
  await redis.quit().catch(() => undefined);
}
process.exit(exitCode);
