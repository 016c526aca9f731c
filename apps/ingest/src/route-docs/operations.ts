import { PRESETS } from '@postern/shared';
import type { RouteReference } from './route-reference.js';
import { STANDARD_POLICY, STANDARD_TIMELINE } from './samples.js';

/** Health, metrics, this document, Bull Board; the policy presets. */
export const OPERATIONS_DOCS: Record<string, RouteReference> = {
  'get /healthz': {
    description: 'Answers as long as the process runs, whatever Redis does: the liveness probe. No auth; it carries no data.',
    responses: { 200: { status: 'ok' } },
  },
  'get /readyz': {
    description:
      'Asks Redis for `PING` (2 s at most) and whether Redis still holds its data (`redis_data`: a marker Postern keeps, gone after a flush or a restart without persistence). 200 while every check passes; 503 naming the failing ones, so a load balancer stops sending traffic to an ingest that could not store an event. No auth.',
    responses: { 200: { status: 'ok', checks: { redis: 'ok', redis_data: 'ok' } } },
  },
  'get /metrics': {
    description:
      "Ingest's Prometheus metrics in the text exposition format: requests by method, route pattern and status, their durations, and Node's process metrics. No auth: keep it on the private network.",
    responses: {
      200: [
        '# HELP postern_http_requests_total HTTP requests answered by ingest, by method, route pattern and status code.',
        '# TYPE postern_http_requests_total counter',
        'postern_http_requests_total{method="GET",route="/healthz",status="200"} 1',
        'postern_http_requests_total{method="GET",route="/readyz",status="200"} 1',
        '',
      ].join('\n'),
    },
  },
  'get /openapi.json': {
    description:
      "This API as an OpenAPI 3.1 document, built from the schemas that validate each request and shape each answer, with every route's errors and their codes. No auth. Generate clients from it, or read it rendered at `/docs/api`.",
    responses: { 200: { openapi: '3.1.0', info: { title: 'Postern API', version: '1.0.0' }, paths: { '/healthz': { get: { operationId: 'getHealthz', summary: 'Process alive' } } } } },
  },
  'get /docs/api': {
    description:
      'This reference as a web page: it renders `/openapi.json` in the browser with Redoc, whose script this ingest serves itself, so the page needs no network beyond it. No auth, like `/openapi.json`.',
    responses: { 200: '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Postern API reference</title>\n…' },
  },
  'get /admin/queues': {
    description:
      "Bull Board, a web UI of the deliveries queue: jobs by state, their data and logs. Sign in with the admin token as a bearer token, or in the browser's prompt with any user name and the admin token as the password. Read-only unless `BULL_BOARD_READ_ONLY=false`.",
    responses: { 200: '<!DOCTYPE html>\n<html lang="en" dir="ltr">\n<head>\n    <meta charset="utf-8" />\n…' },
  },

  'get /v1/policies': {
    description:
      "Every preset an endpoint's `policy` can name: `standard`, Postern's default, and the presets that reproduce other senders' delivery rules, each with a one-line summary, the assumptions made where those rules are silent, and the resolved policy. No auth.",
    responses: {
      200: {
        data: [
          { name: 'standard', seed: null, summary: PRESETS.standard.summary, assumptions: [], policy: STANDARD_POLICY },
        ],
      },
    },
  },
  'get /v1/policies/:name/timeline': {
    description:
      "When each attempt of a delivery that always fails would start under the preset: for attempt n, the earliest and latest start in ms after the first attempt, jitter included (a `Retry-After` answer or a paused endpoint can only push them later). 404 `not_found` for a name that is not a preset. No auth.",
    responses: { 200: { name: 'standard', attempts: STANDARD_TIMELINE } },
  },
  'post /v1/policies/preview': {
    description:
      'Resolves a policy exactly as creating an endpoint with it would (a preset name, a preset plus overrides, or a custom policy whose missing fields come from `standard`) and returns it with its attempt timeline. Nothing is saved: a form can show what saving would do. An invalid policy is 400 `invalid_policy` naming the field, as on create.',
    request: { policy: { preset: 'tourical', maxAttempts: 3 } },
    responses: {
      200: {
        policyName: null,
        policy: {
          maxAttempts: 3,
          schedule: { kind: 'fixed', waitsMs: [60000, 300000, 1800000, 7200000, 43200000] },
          jitterRatio: 0,
          retryAfter: 'ignore',
          timeout: { ms: 15000, measures: 'whole-response' },
          redirects: { follow: true, maxHops: 3 },
          unsafeUrl: 'retry',
          unsafeUrlCountsAgainstEndpoint: false,
          maxPayloadBytes: 1048576,
          maxResponseBytesRead: 0,
          keepResponseBody: 'none',
          onEndpointInactive: 'hold',
          breaker: { counts: 'attempts', of: '4xx', threshold: 24, minStreakMs: 86400000, action: 'pause', pendingOnTrip: 'hold', reenable: 'resume', countTestEvents: false },
          retryTestEvents: true,
          goneDisables: false,
          retention: { days: 3650 },
          concurrency: { perEndpoint: 4, perOrg: 20 },
          redelivery: { allowed: true, whilePending: true },
          preAttemptCheck: 'none',
          ordering: 'none',
          rateLimit: null,
          pacing: 'none',
        },
        attempts: [
          { attempt: 1, earliestMs: 0, latestMs: 0 },
          { attempt: 2, earliestMs: 60000, latestMs: 60000 },
          { attempt: 3, earliestMs: 360000, latestMs: 360000 },
        ],
      },
    },
  },
};
