import { z } from 'zod';
import { parseSecretKeyring, type SecretKeyring } from './secret-box.js';
import { redisConnectionPlan, redisSettingsShape, type RedisConnectionPlan, type RedisSettings } from './redis-settings.js';
import { parseAllowList } from './url-rules.js';

/**
 * Settings both apps read, with the same rules: where Redis is, the key prefix they must agree on,
 * the private addresses endpoints may reach, the log level, and the timeouts of every HTTP server
 * they run (ingest's API, the sender's health port), so a slow or stalled client cannot hold a
 * connection (see {@link httpServerOptions}).
 */
export const commonConfigShape = {
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://').default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_.-]+$/, 'letters, digits and :_.- only').default('postern'),
  /**
   * `host:port,host:port,…`: seed nodes of a Redis Cluster; when set, both apps use a cluster
   * client and `REDIS_URL` is not used. Empty (default) = standalone Redis at `REDIS_URL`.
   */
  REDIS_CLUSTER_NODES: z.string().regex(/^$|^[^,\s]+:\d{1,5}(,[^,\s]+:\d{1,5})*$/, 'must be host:port,host:port,…').default(''),
  ...redisSettingsShape,
  /** How many BullMQ queues carry deliveries, each its own hash slot (README, "Scaling"); 1..256, default 1. */
  QUEUE_PARTITIONS: z.coerce.number().int().min(1).max(256).default(1),
  ALLOWED_ADDRESSES: z.string().default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one JSON object a line) or `pretty` (lines for people); absent = as `logFormatOf` decides. */
  LOG_FORMAT: z.enum(['json', 'pretty'], { error: 'must be json or pretty' }).optional().or(z.literal('').transform(() => undefined)),
  /** About how many delivery changes each org's live feed keeps (the window a live stream resumes within); 0 = no feed. */
  LIVE_FEED_MAX_ENTRIES: z.coerce.number().int().min(0).max(100_000).default(1_000),
  /** Time a client has to send a request's headers, ms; then 408 and the connection is closed. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** Time a client has to send a whole request, body included, ms; then 408 and close. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** How long an idle keep-alive connection stays open after an answer, ms. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** `production` makes `SECRETS_KEY` (and ingest's `PUBLIC_URL`) required. */
  NODE_ENV: z.string().optional(),
  /**
   * 32 random bytes, base64 (`openssl rand -base64 32`): seals every stored secret (README,
   * "Secrets at rest"). Required when NODE_ENV=production; unset elsewhere = secrets stored plain.
   */
  SECRETS_KEY: z.string().optional(),
  /** The id stored with every value `SECRETS_KEY` seals; default `k1`. */
  SECRETS_KEY_ID: z.string().optional(),
  /** `id:key,id:key`: older keys, kept to open what they sealed until `npm run secrets:reencrypt` moved it. */
  SECRETS_KEY_PREVIOUS: z.string().optional(),
};

/** The settings {@link parseEnvConfig} reads the secrets keyring from. */
export interface SecretKeySettings {
  NODE_ENV?: string;
  SECRETS_KEY?: string;
  SECRETS_KEY_ID?: string;
  SECRETS_KEY_PREVIOUS?: string;
}

/** The HTTP server timeouts of {@link commonConfigShape}, as parsed. */
export interface HttpTimeoutSettings {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
}

/** Options for `http.createServer` (Node's names and units: ms). */
export interface HttpServerTimeoutOptions {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  /** How often Node looks for requests past their timeouts, ms. */
  connectionsCheckingInterval: number;
}

/**
 * The options every Postern HTTP server is created with: `createServer(httpServerOptions(config),
 * handler)`. Node answers a request whose headers (or whole request) did not arrive in time with
 * 408 and closes the connection; it looks every `connectionsCheckingInterval` ms (a tenth of the
 * shorter timeout, 100 ms to 1 s; Node's own default is 30 s), so a stalled client is cut off
 * within its limit plus at most that interval. Node's defaults (headers 60 s, request 300 s) let
 * one client hold a connection for minutes.
 */
export function httpServerOptions(config: HttpTimeoutSettings): HttpServerTimeoutOptions {
  const shorter = Math.min(config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS);
  return {
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(shorter / 10))),
  };
}

/**
 * Parses an app's environment with its zod schema (which must include {@link commonConfigShape})
 * and turns `ALLOWED_ADDRESSES` into entries and the Redis settings into a connection plan
 * (`redisConnectionPlan`). Pure: takes the environment as an object.
 *
 * @throws Error whose message is one line naming the bad or missing setting, e.g.
 *   `invalid configuration: ADMIN_TOKEN: is required`.
 */
export function parseEnvConfig<S extends z.ZodType<{ ALLOWED_ADDRESSES: string } & HttpTimeoutSettings & SecretKeySettings & RedisSettings>>(
  schema: S,
  env: Record<string, string | undefined>,
): z.infer<S> & { allowList: string[]; secretKeyring: SecretKeyring; redisPlan: RedisConnectionPlan } {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path.join('.') ?? '?';
    const message = issue?.code === 'invalid_type' && env[name] === undefined ? 'is required' : (issue?.message ?? 'invalid');
    throw new Error(`invalid configuration: ${name}: ${message}`);
  }
  // Node refuses a headers timeout longer than the whole-request timeout.
  if (parsed.data.HTTP_HEADERS_TIMEOUT_MS > parsed.data.HTTP_REQUEST_TIMEOUT_MS) {
    throw new Error('invalid configuration: HTTP_HEADERS_TIMEOUT_MS: must not be longer than HTTP_REQUEST_TIMEOUT_MS');
  }
  let allowList: string[];
  try {
    allowList = parseAllowList(parsed.data.ALLOWED_ADDRESSES);
  } catch (err) {
    throw new Error(`invalid configuration: ALLOWED_ADDRESSES: ${(err as Error).message}`);
  }
  if (parsed.data.NODE_ENV === 'production' && !parsed.data.SECRETS_KEY) {
    throw new Error('invalid configuration: SECRETS_KEY: is required when NODE_ENV=production (32 random bytes, base64: openssl rand -base64 32)');
  }
  const secretKeyring = parseSecretKeyring(parsed.data);
  // Where Redis is, with TLS and an ACL user: contradicting settings stop start-up here.
  const redisPlan = redisConnectionPlan(parsed.data);
  return { ...parsed.data, allowList, secretKeyring, redisPlan };
}
