import type { AcceptDurability } from '@postern/shared';
import type { SandboxPool } from '@postern/sandbox';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { IdFactory } from '@postern/shared';
import type { Tracer } from '@postern/telemetry';
import type { LiveHub } from './live-hub.js';
import type { LiveStreamSettings } from './routes/delivery-stream.js';
import type { DataLossMonitor, DeliveryQueues, RedisClient, Store } from '@postern/store';

/** Endpoints one org may have unless `MAX_ENDPOINTS_PER_ORG` says otherwise. */
export const DEFAULT_MAX_ENDPOINTS_PER_ORG = 1_000;
/** Deliveries one request may create unless `MAX_DELIVERIES_PER_REQUEST` says otherwise. */
export const DEFAULT_MAX_DELIVERIES_PER_REQUEST = 10_000;

/** Everything `createApp` needs; `main.ts` (or a test) builds it. */
export interface AppDeps {
  /** API connection (fails fast: `enableOfflineQueue: false`), the store's. */
  redis: RedisClient;
  store: Store;
  /** Sandboxes for checking and testing transformations; default the app's own (one thread, started on first use). */
  sandbox?: SandboxPool;
  /**
   * The deliveries queues (one per partition), on a connection of their own (also failing fast):
   * ioredis copies every script defined on a connection into each pipeline made on it, and BullMQ
   * defines dozens.
   */
  queues: DeliveryQueues;
  clock: { now(): number };
  ids: IdFactory;
  logger: Logger;
  /**
   * Where ingest's metrics are registered, served at `/metrics` with whatever else the caller put
   * there (`main.ts`: the default process metrics). A fresh one when absent; never prom-client's
   * global registry.
   */
  registry?: Registry;
  /** OpenTelemetry tracer (`OTEL_*` set: see `startTracing`); absent = tracing off, no span is made. */
  tracer?: Tracer;
  /** Notices Redis losing its data (`/readyz` check `redis_data`, metric `postern_redis_data_lost`); none in most tests. */
  dataLossMonitor?: DataLossMonitor;
  /**
   * Fans each org's live feed out to the live streams (`GET /v1/deliveries/stream`); the caller
   * closes it before the server (it ends every stream). Absent: one of the app's own, whose
   * blocking reads use duplicates of `redis`.
   */
  liveHub?: LiveHub;
  config: {
    /**
     * What a 202 waits for (`ACCEPT_DURABILITY`, docs/production-redis.md): `local` (default) the
     * primary's write; `replica` also `replicas` replicas' confirmation (`WAIT`, `ACCEPT_REPLICAS`)
     * within `waitMs` (`ACCEPT_WAIT_MS`); `local-fsync` the primary's AOF on disk (`WAITAOF`).
     */
    durability?: { mode: AcceptDurability; replicas: number; waitMs: number };
    adminToken: string;
    /** Largest request body accepted, bytes (`MAX_BODY_BYTES`). */
    maxBodyBytes: number;
    /** Endpoints one org may have (`MAX_ENDPOINTS_PER_ORG`); default {@link DEFAULT_MAX_ENDPOINTS_PER_ORG}. */
    maxEndpointsPerOrg?: number;
    /**
     * Deliveries one request may create (`MAX_DELIVERIES_PER_REQUEST`): one event's fan-out, or a
     * batch's summed in item order; default {@link DEFAULT_MAX_DELIVERIES_PER_REQUEST}.
     */
    maxDeliveriesPerRequest?: number;
    /** Private addresses an endpoint URL may name (`ALLOWED_ADDRESSES`). */
    allowList: readonly string[];
    /** Old secret keeps signing this long after a rotation, ms. */
    secretRotationGraceMs: number;
    /** Bull Board at `/admin/queues` shows but cannot change jobs (`BULL_BOARD_READ_ONLY`); default true. */
    bullBoardReadOnly?: boolean;
    /**
     * How long an API key's cached lookup (its org, the org's endpoints) is used before it is read
     * again, ms (`LOOKUP_CACHE_TTL_MS`); changes made through Postern are seen at once whatever
     * this is. 0 = no cache. Default 10 000.
     */
    lookupCacheTtlMs?: number;
    /** Most API keys the lookup cache holds (`LOOKUP_CACHE_MAX_ENTRIES`); default 10 000. */
    lookupCacheMaxEntries?: number;
    /**
     * Origin the portal URLs start with, e.g. `https://postern.example.com` (`PUBLIC_URL`); absent:
     * the origin the minting request was made to.
     */
    publicUrl?: string;
    /**
     * Origins that may show the customer portal in an iframe (`PORTAL_FRAME_ANCESTORS`), sent as
     * the portal page's `Content-Security-Policy: frame-ancestors`; empty or absent: no framing.
     */
    portalFrameAncestors?: readonly string[];
    /** The live stream's heartbeat, credential re-check and per-key limit (`LIVE_STREAM_*`); defaults in `LIVE_STREAM_DEFAULTS`. */
    liveStream?: LiveStreamSettings;
    /** Levels of the request line and the event-accepted line (`logPlanOf`); default `info` and `debug`, as in JSON logs. */
    logLevels?: { request: 'info' | 'debug'; event: 'info' | 'debug' };
  };
}
