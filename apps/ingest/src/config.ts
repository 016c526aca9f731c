import { parseAllowList } from '@postern/shared';
import { z } from 'zod';

/** Ingest's settings, read from the environment by `main.ts` only. Units are in the names. */
export const ingestConfigSchema = z.object({
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://').default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_{}.-]+$/, 'letters, digits and :_{}.- only').default('postern'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters'),
  ALLOWED_ADDRESSES: z.string().default(''),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BULL_BOARD_READ_ONLY: z.stringbool({ error: 'must be true or false' }).default(true),
});

/** Parsed ingest settings, plus the allow-list as entries. */
export type IngestConfig = z.infer<typeof ingestConfigSchema> & { allowList: string[] };

/**
 * Parses the environment. Throws an Error whose message is one line naming the bad or missing
 * setting, e.g. `ADMIN_TOKEN: must be at least 16 characters`.
 */
export function loadIngestConfig(env: NodeJS.ProcessEnv): IngestConfig {
  const parsed = ingestConfigSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path.join('.') ?? '?';
    const message = issue?.code === 'invalid_type' && env[name] === undefined ? 'is required' : (issue?.message ?? 'invalid');
    throw new Error(`invalid configuration: ${name}: ${message}`);
  }
  let allowList: string[];
  try {
    allowList = parseAllowList(parsed.data.ALLOWED_ADDRESSES);
  } catch (err) {
    throw new Error(`invalid configuration: ALLOWED_ADDRESSES: ${(err as Error).message}`);
  }
  return { ...parsed.data, allowList };
}
