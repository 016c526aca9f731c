import { parseAllowList } from '@postern/shared';
import { z } from 'zod';

/** The sender's settings, read from the environment by `main.ts` only. Units are in the names. */
export const senderConfigSchema = z.object({
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://').default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_{}.-]+$/, 'letters, digits and :_{}.- only').default('postern'),
  SENDER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(50),
  SENDER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  SENDER_HOST: z.string().default('0.0.0.0'),
  ALLOWED_ADDRESSES: z.string().default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  RECONCILE_GRACE_MS: z.coerce.number().int().min(0).default(300_000),
  JANITOR_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  JOB_LOCK_DURATION_MS: z.coerce.number().int().min(1000).default(30_000),
  STALLED_CHECK_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
  PARK_SAFETY_DELAY_MS: z.coerce.number().int().min(1000).default(60_000),
});

/** Parsed sender settings, plus the allow-list as entries. */
export type SenderConfig = z.infer<typeof senderConfigSchema> & { allowList: string[] };

/**
 * Parses the environment. Throws an Error whose message is one line naming the bad setting,
 * e.g. `SENDER_CONCURRENCY: Too big: expected number to be <=1000`.
 */
export function loadSenderConfig(env: NodeJS.ProcessEnv): SenderConfig {
  const parsed = senderConfigSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid configuration: ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`);
  }
  let allowList: string[];
  try {
    allowList = parseAllowList(parsed.data.ALLOWED_ADDRESSES);
  } catch (err) {
    throw new Error(`invalid configuration: ALLOWED_ADDRESSES: ${(err as Error).message}`);
  }
  return { ...parsed.data, allowList };
}
