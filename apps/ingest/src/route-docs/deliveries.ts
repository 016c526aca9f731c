import type { RouteReference } from './route-reference.js';
import { DELIVERY, DELIVERY_ID, ENDPOINT_ID, EVENT_ID, FAILED_DELIVERY, FAILED_DELIVERY_ID, FAILING_ENDPOINT_ID, ORG_ID, WAITING_DELIVERY } from './samples.js';

/** The request headers of attempt `n` of the failed delivery, as sent. */
function failedAttemptHeaders(n: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Postern/0.1.0',
    'webhook-id': EVENT_ID,
    'webhook-timestamp': '1796183850',
    'webhook-signature': 'v1,nH6MY5wV8h847F2NfgJEhoHrmwphzP+xQYP7HS79ttE=',
    'webhook-attempt': String(n),
    'webhook-delivery-id': FAILED_DELIVERY_ID,
    'webhook-request-id': `${FAILED_DELIVERY_ID}.${n}`,
  };
}

/** The receiver's answer to both attempts of the failed delivery, as kept (`keepResponseBody: failed`). */
const MAINTENANCE_RESPONSE = {
  headers: { 'content-type': 'application/json', date: 'Wed, 02 Dec 2026 03:57:30 GMT', connection: 'keep-alive', 'content-length': '23' },
  headersTruncated: false,
  body: '{"error":"maintenance"}',
  bodyTruncated: false,
};

/** The succeeded delivery with its one attempt (signed by the current secret and the one it replaced). */
const DELIVERY_WITH_ATTEMPT = {
  ...DELIVERY,
  attempts: [
    {
      number: 1,
      startedAt: '2026-12-02T03:57:29.947Z',
      durationMs: 65,
      responseStatus: 200,
      error: null,
      requestHeaders: {
        'content-type': 'application/json',
        'user-agent': 'Postern/0.1.0',
        'webhook-id': EVENT_ID,
        'webhook-timestamp': '1796183849',
        'webhook-signature': 'v1,ddsf2kjW2a/cgVwplHeEZ3OBxSO2TzwO37nF1OGNFE4= v1,WfqC0VvfJiOTo4D0fznLKhVoMs3L7KMBuZi7+jsC+ek=',
        'webhook-attempt': '1',
        'webhook-delivery-id': DELIVERY_ID,
        'webhook-request-id': `${DELIVERY_ID}.1`,
        'x-team': 'billing',
      },
      response: null,
    },
  ],
};

/** The last `count` one-minute buckets of an hour's stats, oldest first, with `failed` attempts in the last. */
function minutes(lastMinute: string, count: number, failed: number): { startAt: string; attempts: number; succeeded: number; failed: number }[] {
  const last = Date.parse(lastMinute);
  return Array.from({ length: count }, (_, i) => {
    const n = i === count - 1 ? failed : 0;
    return { startAt: new Date(last - (count - 1 - i) * 60_000).toISOString(), attempts: n, succeeded: 0, failed: n };
  });
}

/** The delivery log and what acts on it; live deliveries; attempt counts; breaker notifications. */
export const DELIVERY_DOCS: Record<string, RouteReference> = {
  'get /v1/endpoints/:id/deliveries': {
    description:
      "An endpoint's delivery log, newest first, optionally of one `status` (`pending`: queued, waiting for a retry, or held while the endpoint is inactive; `in_flight`; `succeeded`; `failed`; `cancelled`). Each delivery is one event on its way to this endpoint: its status, attempt count, last answer and error code, and when its next attempt is due. A page may hold fewer than `limit` deliveries (with `status=pending`, those whose attempt began meanwhile are left out; expired ones are dropped as they are read): follow `nextCursor` until it is null.",
    responses: { 200: { data: [DELIVERY], nextCursor: null } },
  },
  'get /v1/deliveries/:id': {
    description: [
      'One delivery with every attempt: when it started, how long it took, the status and error code, the request headers exactly as sent (signature included; null when nothing was sent) and, where the policy keeps it (by default for failed attempts), the response: up to 32 headers and 4 KB of them, and the first `maxResponseBytesRead` bytes of the body as text.',
      '',
      "Where the org's pre-attempt check cancelled an attempt, that attempt sent nothing and names why (`cancelReason`); where it froze another body for this delivery, the delivery shows it as `frozenEnvelope`.",
    ].join('\n'),
    responses: {
      200: {
        ...FAILED_DELIVERY,
        attempts: [
          { number: 1, startedAt: '2026-12-02T03:57:30.026Z', durationMs: 53, responseStatus: 503, error: 'http_503', requestHeaders: failedAttemptHeaders(1), response: MAINTENANCE_RESPONSE },
          { number: 2, startedAt: '2026-12-02T03:57:30.160Z', durationMs: 10, responseStatus: 503, error: 'http_503', requestHeaders: failedAttemptHeaders(2), response: MAINTENANCE_RESPONSE },
        ],
      },
    },
  },
  'get /v1/deliveries/export': {
    description:
      "The org's delivery log as NDJSON, streamed: one delivery per line as `GET /v1/deliveries/:id` shows it (no payload, no secrets), endpoint by endpoint, oldest first; filtered by `endpointId` (a deleted endpoint's id too, while its deliveries are kept), `status`, `since` and `until`. It is read from Redis only as fast as the client takes it, so any size of log can be exported. An export cut short by a failure ends without its final chunk, so a client cannot take it for a whole one.",
    responses: { 200: `${JSON.stringify(DELIVERY_WITH_ATTEMPT)}\n` },
  },
  'get /v1/deliveries/stream': {
    description: [
      "Live deliveries as Server-Sent Events: a `delivery` event each time an attempt of the org's deliveries finishes, or a delivery ends or is held without one, filtered by `endpointId`, `status` and `eventType` (exact, `prefix.*` or `*`). Its `data` is `{deliveryId, endpointId, eventId, eventType, status, attempt, responseStatus, error, durationMs, nextAttemptAt, at}`.",
      '',
      "Reconnect with `Last-Event-ID` (browsers do) to get what was missed, within the window Postern keeps (about `LIVE_FEED_MAX_ENTRIES` changes, and an hour); a `reset` event says some were lost. A comment line every `LIVE_STREAM_HEARTBEAT_MS` keeps proxies from closing it. An `end` event (`{reason}`: `credential_revoked`, `session_revoked`, `session_expired`, `org_suspended` or `shutting_down`) closes it. A credential may hold `LIVE_STREAM_MAX_PER_KEY` streams on one ingest (429 `too_many_streams` beyond).",
    ].join('\n'),
    responses: {
      200: [
        'retry: 3000',
        `: live deliveries of ${ORG_ID}`,
        '',
        'id: 1796183851176-0',
        'event: delivery',
        `data: {"deliveryId":"dlv_01M8TED03PAFZTXJP7DS9KSYDZ","endpointId":"${ENDPOINT_ID}","eventId":"evt_01M8TED03PAFZTXJP7DS9KSYDY","eventType":"invoice.refunded","status":"succeeded","attempt":1,"responseStatus":200,"error":null,"durationMs":25,"nextAttemptAt":null,"at":"2026-12-02T03:57:31.175Z"}`,
        '',
        ': heartbeat',
        '',
        '',
      ].join('\n'),
    },
  },
  'post /v1/deliveries/:id/send-now': {
    description:
      'Makes the next attempt of a delivery that is waiting for a retry (`waitingForNextAttempt: true`) now; the attempts after it keep the policy\'s schedule, counted from their numbers. 409 when it is not waiting: `in_flight`, `delivery_finished` (redeliver it instead), `delivery_held` (its endpoint is inactive: resume it), `endpoint_inactive` (its endpoint was deleted) or `not_waiting` (its first attempt is still queued, or it waits for a concurrency slot, a rate-limit turn or the end of a `Retry-After` pause). Takes no body.',
    responses: { 202: { delivery: { ...WAITING_DELIVERY, nextAttemptAt: '2026-12-02T03:57:30.678Z' } } },
  },
  'post /v1/deliveries/:id/redeliver': {
    description:
      "Makes a new delivery of the same event to the same endpoint (`redeliveredFromId` names the original; the original is never changed), with a fresh schedule. 409 `in_flight` (an attempt of it is running), `delivery_pending` (it is still pending, and the policy redelivers only finished deliveries), `endpoint_inactive`, `redelivery_not_offered` (the endpoint's policy has no redelivery) or `data_erased`. Takes no body.",
    responses: {
      202: {
        delivery: {
          ...DELIVERY,
          id: 'dlv_01M8TECZQBVV2YES87100CQ08C',
          status: 'pending',
          attemptCount: 0,
          nextAttemptAt: '2026-12-02T03:57:30.731Z',
          lastResponseStatus: null,
          lastDurationMs: null,
          deliveredAt: null,
          createdAt: '2026-12-02T03:57:30.731Z',
          finishedAt: null,
          redeliveredFromId: DELIVERY_ID,
        },
      },
    },
  },
  'post /v1/endpoints/:id/redeliver-failed': {
    description:
      "Redelivers the endpoint's failed deliveries, and those its breaker cancelled, oldest first, 500 at most per call: call again while `remaining` is above 0. A delivery is taken by one bulk call only, so calling again never sends it twice; those whose event's data was erased are left out. 409 `redelivery_not_offered` or `endpoint_inactive` when the endpoint's policy or state allows no redelivery. Takes no body.",
    responses: { 202: { count: 1, remaining: 0 } },
  },
  'post /v1/endpoints/:id/recover': {
    description: 'Redelivers, as `redeliver-failed` does, the deliveries that ended failed (or cancelled by the breaker) at or after `since`, an ISO 8601 date-time: for catching up after an outage of the receiver.',
    request: { since: '2026-12-02T02:57:30.000Z' },
    responses: { 202: { count: 2, remaining: 0 } },
  },

  'get /v1/stats': {
    description:
      "Attempts as they finished, for the org or one endpoint (`endpointId`): over the last hour in one-minute buckets (`window=hour`, the default) or the last day in one-hour buckets (`window=day`), with totals, the success rate and failures by error code. Counted by the senders as attempts finish, never by reading the log, so it costs the same whatever the log's size. A sender writes its counts about once a second, so they may trail the delivery log by up to a second; a sender killed outright (SIGKILL) loses at most its last second of counts (the delivery log itself is unaffected).",
    responses: {
      200: {
        scope: { endpointId: FAILING_ENDPOINT_ID },
        window: 'hour',
        bucketMs: 60000,
        totals: { attempts: 4, succeeded: 0, failed: 4, successRate: 0 },
        buckets: minutes('2026-12-02T03:57:00.000Z', 60, 4),
        errors: [{ code: 'http_503', count: 4 }],
      },
    },
  },
  'get /v1/notifications': {
    description:
      "Endpoints a breaker paused or disabled, newest first: which one, why, after how many failures, and how many waiting deliveries the trip cancelled, failed or held at once. Each is also sent as an `endpoint.paused` or `endpoint.disabled` event to the org's endpoints that name those types.",
    responses: {
      200: {
        data: [
          {
            id: 'ntf_01M8TED012XE7541JAE0F3SD5X',
            kind: 'endpoint.disabled',
            endpointId: FAILING_ENDPOINT_ID,
            endpointUrl: 'https://ledger.example.com/webhooks',
            reason: '20 consecutive failed deliveries since 2026-12-02T02:57:31.042Z',
            consecutiveFailures: 20,
            deliveriesAffected: 0,
            createdAt: '2026-12-02T03:57:31.042Z',
          },
        ],
        nextCursor: null,
      },
    },
  },
};
