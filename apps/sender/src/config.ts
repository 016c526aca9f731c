import { commonConfigShape, parseEnvConfig } from '@postern/shared';
import { z } from 'zod';

/** The sender's settings, read from the environment by `main.ts` only. Units are in the names. */
export const senderConfigSchema = z.object({
  ...commonConfigShape,
  SENDER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(50),
  SENDER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  SENDER_HOST: z.string().default('0.0.0.0'),
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  RECONCILE_GRACE_MS: z.coerce.number().int().min(0).default(300_000),
  JANITOR_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  JOB_LOCK_DURATION_MS: z.coerce.number().int().min(1000).default(30_000),
  STALLED_CHECK_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
  PARK_SAFETY_DELAY_MS: z.coerce.number().int().min(1000).default(60_000),
  /** How often the sender beats into Redis, ms; 0 = no heartbeat (a killed sender's attempts then wait for their job locks). */
  HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** A sender whose heartbeat is older than this is taken over by a live one, ms; more than twice HEARTBEAT_INTERVAL_MS. */
  TAKEOVER_AFTER_MS: z.coerce.number().int().min(1000).default(5000),
  /** An org's pre-attempt check URL must answer within this, ms (issue 16). */
  PRE_ATTEMPT_CHECK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(3_000),
  /** One call of an endpoint's transformation may run this long, wall clock, ms (docs/transformations.md). */
  TRANSFORM_TIMEOUT_MS: z.coerce.number().int().min(5).max(10_000).default(50),
  /** Threads running transformations' sandboxes, started with the first transformation. */
  TRANSFORM_THREADS: z.coerce.number().int().min(1).max(32).default(2),
  /**
   * An egress proxy every request goes through (`http://` or `https://`, optional `user:password@`),
   * unless its endpoint has its own `proxy` or its host is in EGRESS_PROXY_BYPASS; empty = none.
   */
  EGRESS_PROXY_URL: z
    .string()
    .default('')
    .refine((raw) => raw === '' || isProxyUrl(raw), 'must be an http:// or https:// URL of a proxy (scheme://[user:password@]host[:port]), or empty'),
  /** Hosts reached directly despite EGRESS_PROXY_URL: comma-separated names (subdomains included), addresses, or `*`. */
  EGRESS_PROXY_BYPASS: z.string().default(''),
});

function isProxyUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && (url.pathname === '/' || url.pathname === '') && url.search === '' && url.hash === '';
  } catch {
    return false;
  }
}

/** The proxy bypass list of EGRESS_PROXY_BYPASS: trimmed, empty entries dropped. */
export function proxyBypassList(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Parsed sender settings, plus the allow-list as entries and the secrets keyring. */
export type SenderConfig = ReturnType<typeof parseEnvConfig<typeof senderConfigSchema>>;

/**
 * Parses the environment. Throws an Error whose message is one line naming the bad setting,
 * e.g. `SENDER_CONCURRENCY: Too big: expected number to be <=1000`, or
 * `TAKEOVER_AFTER_MS: must be more than twice HEARTBEAT_INTERVAL_MS`.
 */
export function loadSenderConfig(env: NodeJS.ProcessEnv): SenderConfig {
  const config = parseEnvConfig(senderConfigSchema, env);
  // A lapse of two beats or less would take over senders that are merely a beat late.
  if (config.HEARTBEAT_INTERVAL_MS > 0 && config.TAKEOVER_AFTER_MS <= 2 * config.HEARTBEAT_INTERVAL_MS) {
    throw new Error('invalid configuration: TAKEOVER_AFTER_MS: must be more than twice HEARTBEAT_INTERVAL_MS');
  }
  return config;
}
