import { z } from 'zod';
import { parseAllowList } from './url-rules.js';

/**
 * Settings both apps read, with the same rules: where Redis is, the key prefix they must agree on,
 * the private addresses endpoints may reach, and the log level.
 */
export const commonConfigShape = {
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://').default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_{}.-]+$/, 'letters, digits and :_{}.- only').default('postern'),
  ALLOWED_ADDRESSES: z.string().default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

/**
 * Parses an app's environment with its zod schema (which must include {@link commonConfigShape})
 * and turns `ALLOWED_ADDRESSES` into entries. Pure: takes the environment as an object.
 *
 * @throws Error whose message is one line naming the bad or missing setting, e.g.
 *   `invalid configuration: ADMIN_TOKEN: is required`.
 */
export function parseEnvConfig<S extends z.ZodType<{ ALLOWED_ADDRESSES: string }>>(
  schema: S,
  env: Record<string, string | undefined>,
): z.infer<S> & { allowList: string[] } {
  const parsed = schema.safeParse(env);
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
