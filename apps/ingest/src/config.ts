import { ACCEPT_DURABILITY_MODES, commonConfigShape, parseEnvConfig } from '@postern/shared';
import { z } from 'zod';

/** One `frame-ancestors` source: scheme, host (optionally `*.` first) and port, nothing else. */
const FRAME_ANCESTOR = /^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$/;

/** Ingest's settings, read from the environment by `main.ts` only. Units are in the names. */
export const ingestConfigSchema = z.object({
  ...commonConfigShape,
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters'),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  BULL_BOARD_READ_ONLY: z.stringbool({ error: 'must be true or false' }).default(true),
  LOOKUP_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
  LOOKUP_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /** Endpoints one org may have; creating one more is 409 `endpoint_limit_reached`. */
  MAX_ENDPOINTS_PER_ORG: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  /** Deliveries one request may create (an event's fan-out; a batch's, summed in order); beyond it 422 `too_many_deliveries`. */
  MAX_DELIVERIES_PER_REQUEST: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** Live streams (`GET /v1/deliveries/stream`) one credential may hold open on one ingest process; 0 = streams off. */
  LIVE_STREAM_MAX_PER_KEY: z.coerce.number().int().min(0).max(1_000).default(5),
  /** A live stream's heartbeat (a comment line), ms. */
  LIVE_STREAM_HEARTBEAT_MS: z.coerce.number().int().min(1_000).max(300_000).default(15_000),
  PUBLIC_URL: z
    .string()
    .regex(/^https?:\/\/[^/?#\s]+$/, 'must be an origin such as https://postern.example.com (scheme and host, no path)')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** What a 202 waits for: `local` (default), `replica` (WAIT for ACCEPT_REPLICAS replicas), `local-fsync` (WAITAOF, Redis ≥ 7.2). */
  ACCEPT_DURABILITY: z.enum(ACCEPT_DURABILITY_MODES, { error: 'must be local, replica or local-fsync' }).default('local'),
  /** Replicas that must confirm an event under `ACCEPT_DURABILITY=replica`. */
  ACCEPT_REPLICAS: z.coerce.number().int().min(1).max(16).default(1),
  /** How long ingest waits for that confirmation before answering 503 `not_durable`, ms. */
  ACCEPT_WAIT_MS: z.coerce.number().int().min(1).max(60_000).default(500),
  PORTAL_FRAME_ANCESTORS: z
    .string()
    .default('')
    .transform((raw) => raw.split(/[\s,]+/).filter(Boolean))
    .refine((origins) => origins.every((o) => FRAME_ANCESTOR.test(o)), 'must be origins such as https://app.example.com or https://*.example.com, separated by commas or spaces'),
});

/** Parsed ingest settings, plus the allow-list as entries and the secrets keyring. */
export type IngestConfig = ReturnType<typeof parseEnvConfig<typeof ingestConfigSchema>>;

/**
 * Parses the environment. Throws an Error whose message is one line naming the bad or missing
 * setting, e.g. `ADMIN_TOKEN: must be at least 16 characters`.
 */
export function loadIngestConfig(env: NodeJS.ProcessEnv): IngestConfig {
  const config = parseEnvConfig(ingestConfigSchema, env);
  // Links handed to customers (portal sessions) must not follow whatever Host a request named.
  if (config.NODE_ENV === 'production' && !config.PUBLIC_URL) {
    throw new Error('invalid configuration: PUBLIC_URL: is required when NODE_ENV=production (the origin customers reach Postern at, e.g. https://postern.example.com)');
  }
  return config;
}
