import {
  LIVE_DELIVERY_STATUSES,
  LIVE_STREAM_DEFAULTS,
  MAX_EVENT_TYPE_LENGTH,
  STREAM_ID_PATTERN,
  compareStreamIds,
  isLiveEventTypeFilter,
  matchesLiveFilter,
  mayOpenStream,
  resumeFrom,
  type LiveDeliveryChange,
  type LiveDeliveryFilter,
} from '@postern/shared';
import type { LiveFeedEntry } from '@postern/store';
import { Router, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { ApiError, invalidRequest } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import type { LiveHub } from '../live-hub.js';
import { requestLogger } from '../request-logging.js';
import { ownEndpoint } from './endpoints.js';

const STATUS_MESSAGE =
  `status must be one of ${LIVE_DELIVERY_STATUSES.join(', ')}: the stream sends a delivery's status after each change ` +
  '(an attempt ended, or the delivery ended or was held without one), never in_flight';
const EVENT_TYPE_MESSAGE =
  `eventType must be an event type (invoice.paid), a group ending in ".*" (invoice.*) or "*", at most ${MAX_EVENT_TYPE_LENGTH} characters; ` +
  'no other wildcard is supported';

/**
 * `GET /v1/deliveries/stream` query: `endpointId`, `status` (one of `LIVE_DELIVERY_STATUSES`: a
 * status a change can carry), `eventType` (exact, `prefix.*` or `*`); every one given must match.
 * A filter that could never match (`status=in_flight`, `eventType=invoice*`) is refused rather than
 * opening a stream that would stay silent.
 */
export const deliveryStreamQuery = z.strictObject({
  endpointId: z.string({ error: 'endpointId must be given once, an endpoint id (ep_…)' }).regex(/^ep_[0-9A-Za-z]+$/, 'endpointId must be an endpoint id (ep_…)').optional(),
  status: z.enum(LIVE_DELIVERY_STATUSES, { error: STATUS_MESSAGE }).optional(),
  eventType: z
    .string({ error: EVENT_TYPE_MESSAGE })
    .max(MAX_EVENT_TYPE_LENGTH, EVENT_TYPE_MESSAGE)
    .refine(isLiveEventTypeFilter, EVENT_TYPE_MESSAGE)
    .optional(),
});

/** A stream's buffered, unsent bytes past which its client counts as gone (it stopped reading). */
const MAX_UNSENT_BYTES = 1024 * 1024;

/** The live stream's settings (`AppDeps.config.liveStream`); each defaults to {@link LIVE_STREAM_DEFAULTS}. */
export interface LiveStreamSettings {
  heartbeatMs?: number;
  credentialCheckMs?: number;
  maxPerKey?: number;
}

/** A change as the stream's `data:` carries it: times as ISO 8601. */
export function liveChangeJson(change: LiveDeliveryChange): Record<string, unknown> {
  return {
    ...change,
    nextAttemptAt: change.nextAttemptAt === null ? null : new Date(change.nextAttemptAt).toISOString(),
    at: new Date(change.at).toISOString(),
  };
}

/** The credential a stream counts against: an API key, a platform key for one org, or a portal session. */
function credentialOf(res: Response): string {
  const locals = res.locals as { apiKey?: { id: string } | null; platformKey?: { id: string }; portalSession?: { id: string } | null; orgId: string };
  if (locals.portalSession) return `session:${locals.portalSession.id}`;
  if (locals.platformKey) return `platform:${locals.platformKey.id}:${locals.orgId}`;
  return `key:${locals.apiKey?.id ?? 'unknown'}`;
}

/**
 * `GET /v1/deliveries/stream` (`webhooks:read`): Server-Sent Events, one `delivery` event per
 * change of one of the org's deliveries (an attempt finished, or a delivery ended or held without
 * one) as the finish and settle scripts append it to the org's live feed; `id:` is the feed entry's
 * id. A client that reconnects with `Last-Event-ID` gets what it missed first, within the window
 * the feed keeps (about `LIVE_FEED_MAX_ENTRIES` changes, an hour): when some were trimmed, a
 * `reset` event comes first, so it reloads what it shows. A comment line every `heartbeatMs`; the
 * credential is checked again every `credentialCheckMs`, and a revoked key, ended session or
 * suspended org ends the stream with an `end` event (`{reason}`). At most `maxPerKey` streams per
 * credential on one process: 429 `too_many_streams` past that.
 *
 * `recheck` runs the v1 credential check on the same request again (a revoked key fails it).
 */
export function deliveryStreamRoutes(deps: AppDeps & { liveHub: LiveHub }, recheck: RequestHandler): Router {
  const router = Router();
  const settings = { ...LIVE_STREAM_DEFAULTS, ...(deps.config.liveStream ?? {}) };
  const open = new Map<string, number>();

  router.get('/v1/deliveries/stream', requireScope('webhooks:read'), async (req, res) => {
    const q = deliveryStreamQuery.safeParse(req.query);
    if (!q.success) throw invalidRequest(q.error, '', 'query');
    const lastEventId = req.headers['last-event-id'];
    if (lastEventId !== undefined && (typeof lastEventId !== 'string' || !STREAM_ID_PATTERN.test(lastEventId))) {
      throw new ApiError(400, 'invalid_request', 'Last-Event-ID: must be an id this stream sent (<ms>-<n>)');
    }
    // An id from the future (beyond a minute of clock skew) was never sent: resuming after it would
    // skip every change until then, silently.
    if (lastEventId !== undefined && Number(lastEventId.split('-')[0]) > deps.clock.now() + 60_000) {
      throw new ApiError(400, 'invalid_request', 'Last-Event-ID: later than anything this stream has sent; reconnect without it');
    }
    const orgId = res.locals.orgId as string;
    const filter: LiveDeliveryFilter = { ...q.data };
    if (filter.endpointId !== undefined) await ownEndpoint(deps, res, filter.endpointId);
    const credential = credentialOf(res);
    const openNow = open.get(credential) ?? 0;
    if (!mayOpenStream(openNow, settings.maxPerKey)) {
      throw new ApiError(429, 'too_many_streams', `this credential has ${openNow} live streams open, the most allowed (${settings.maxPerKey}); close one first`);
    }
    open.set(credential, openNow + 1);

    let cursor: string | null = null;
    let backlog: LiveFeedEntry[] = [];
    let ended = false;
    const timers: NodeJS.Timeout[] = [];
    const send = (entries: readonly LiveFeedEntry[]) => {
      let chunk = '';
      for (const e of entries) {
        if (cursor !== null && compareStreamIds(e.id, cursor) <= 0) continue;
        cursor = e.id;
        if (matchesLiveFilter(e.change, filter)) chunk += `id: ${e.id}\nevent: delivery\ndata: ${JSON.stringify(liveChangeJson(e.change))}\n\n`;
      }
      if (chunk !== '') write(chunk);
    };
    const write = (chunk: string) => {
      if (ended) return;
      res.write(chunk);
      if (res.writableLength > MAX_UNSENT_BYTES) finish('slow_consumer');
    };
    const finish = (reason: string | null, endResponse = true) => {
      if (ended) return;
      if (reason !== null && !res.destroyed) res.write(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
      ended = true;
      for (const t of timers) clearInterval(t);
      subscription.unsubscribe();
      const left = (open.get(credential) ?? 1) - 1;
      if (left <= 0) open.delete(credential);
      else open.set(credential, left);
      if (endResponse) res.end();
    };
    const subscription = deps.liveHub.subscribe(orgId, {
      // Until the replay is sent, what the reader hands over waits in `backlog`.
      deliver: (entries) => (cursor === null ? backlog.push(...entries) : send(entries)),
      end: (reason) => finish(reason),
    });
    res.on('close', () => finish(null));

    try {
      await subscription.ready;
      let replay: LiveFeedEntry[] = [];
      let start: string;
      let gap = false;
      if (lastEventId !== undefined) {
        gap = resumeFrom(lastEventId, await deps.store.liveFeed.oldestId(orgId)) === 'gap';
        replay = await deps.store.liveFeed.after(orgId, lastEventId, settings.feedMaxEntries * 2 + 100);
        start = lastEventId;
      } else start = await deps.store.liveFeed.latestId(orgId);
      if (ended) return;
      res.status(200);
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('cache-control', 'no-cache, no-transform');
      res.setHeader('x-accel-buffering', 'no');
      res.flushHeaders();
      write(`retry: 3000\n: live deliveries of ${orgId}\n\n`);
      if (gap) write(`event: reset\ndata: ${JSON.stringify({ reason: 'window_passed' })}\n\n`);
      cursor = start;
      send(replay);
      const waiting = backlog;
      backlog = [];
      send(waiting);
    } catch (err) {
      if (res.headersSent) {
        requestLogger(req, deps.logger).error({ err, path: req.path }, 'live stream failed');
        return finish('internal_error');
      }
      finish(null, false);
      throw err;
    }

    timers.push(setInterval(() => write(': heartbeat\n\n'), settings.heartbeatMs));
    timers.push(
      setInterval(() => {
        const locals: Record<string, unknown> = {};
        recheck(req, { locals } as unknown as Response, (err?: unknown) => {
          if (err instanceof ApiError && (err.status === 401 || err.status === 403)) finish(err.code === 'unauthorized' ? 'credential_revoked' : err.code);
          // Any other failure (Redis unreachable for a moment) keeps the stream: the next check decides.
        });
      }, settings.credentialCheckMs),
    );
  });

  return router;
}
