import type { RouteReference } from './route-reference.js';
import { ENDPOINT, ENDPOINT_ID, FAILING_ENDPOINT_ID, STANDARD_TIMELINE, UPDATED_ENDPOINT } from './samples.js';

/** The hours a 24-hour summary ends with, oldest first: `count` hours up to `lastHour`. */
function hours(lastHour: string, count: number, failedInLast: number): { startAt: string; succeeded: number; failed: number }[] {
  const last = Date.parse(lastHour);
  return Array.from({ length: count }, (_, i) => ({ startAt: new Date(last - (count - 1 - i) * 3_600_000).toISOString(), succeeded: 0, failed: i === count - 1 ? failedInLast : 0 }));
}

/** Endpoints: where deliveries go, their secrets, state and policy; the portal's view of one. */
export const ENDPOINT_DOCS: Record<string, RouteReference> = {
  'post /v1/endpoints': {
    description: [
      'Registers an endpoint: a URL that receives the org\'s events of the types it names (`eventTypes`: 1–100 entries, each an exact type or `"*"`, the default; `"*"` takes every type but the operational ones, `endpoint.paused` and `endpoint.disabled`, which an endpoint takes only by name).',
      '',
      '`policy` decides how deliveries behave (retries, timeouts, redirects, the breaker…): a preset name, a preset plus overrides, or a custom policy; the answer has it resolved, with `warnings` where the combination is legal but probably not meant. The URL is checked for safety (400 `unsafe_url` for a literal non-public address) and again at every attempt, where its host name is resolved.',
      '',
      'The answer carries the signing secret (Standard Webhooks): `whsec_…` for `signatureScheme: "hmac-sha256"` (the default; `v1` signatures), or the `whsk_…` private key for `"ed25519"` (`v1a` signatures), whose public key `whpk_…` receivers verify with. Optional `headers` to send, `auth` (basic, bearer, OAuth 2.0 client credentials or mTLS) and `proxy`: their secrets are stored sealed and shown as `••••` from then on; `transformation` `{code, enabled}` is JavaScript that may rewrite each request.',
    ].join('\n'),
    request: { url: 'https://billing.example.com/webhooks', eventTypes: ['invoice.paid', 'invoice.refunded'], policy: 'standard', description: 'billing service' },
    responses: { 201: { ...ENDPOINT, secret: 'whsec_QEHYqNO0J2U3J7LaTOY5LgMUc21m4f+mP9TQgwy0Iig=', warnings: [] } },
  },
  'get /v1/endpoints': {
    description: "The org's endpoints, a page at a time (`limit` 1–100, default 50; `cursor`: the `nextCursor` of the previous page, null on the last). No secrets.",
    responses: { 200: { data: [ENDPOINT], nextCursor: null } },
  },
  'get /v1/endpoints/:id': {
    description: [
      'One endpoint with its health: when it last succeeded and failed, its failed attempts (`failedAttempts`, `consecutiveFailedAttempts`: every failed attempt, test events included, but not faults inside Postern), and the breaker\'s own streak (`consecutiveFailures` since `failureStreakStartedAt`: only the failures its policy counts).',
      '',
      'A disabled endpoint says when and why (`disabledAt`, `disabledReason`); under `pacing: "adaptive"` it shows its current pace and any pause the receiver asked for (`pace`, `pausedUntil`). No secrets: see `GET /v1/endpoints/:id/secret`.',
    ].join('\n'),
    responses: { 200: { ...UPDATED_ENDPOINT, updatedAt: '2026-12-02T03:57:29.706Z', lastSuccessAt: '2026-12-02T03:57:30.197Z' } },
  },
  'patch /v1/endpoints/:id': {
    description:
      'Changes any of `url`, `eventTypes`, `policy`, `description`, `headers` (the list is replaced), `auth` and `proxy` (`null` removes them; a secret left out of an `auth` of the same type, or of a secret header, keeps the stored one) and `transformation` (`{code, enabled}`; its version goes up when the code changes; `null` removes it). The signing scheme changes only with a new secret: `rotate-secret`. `policyName` is read-only (400 naming it) and `policy: null` resets nothing (400 `invalid_policy`): send a preset name such as `"standard"` to go back to a preset.',
    request: { description: 'billing service (EU)', headers: [{ name: 'X-Team', value: 'billing' }] },
    responses: { 200: { ...UPDATED_ENDPOINT, warnings: [] } },
  },
  'delete /v1/endpoints/:id': {
    description: 'Deletes an endpoint. Its queued deliveries end `cancelled` with `endpoint_deleted` at once, those held or waiting out a retry delay included (up to 10,000 of each; any beyond when they come due). An attempt in progress is recorded as it ends.',
    responses: {},
  },
  'get /v1/endpoints/:id/secret': {
    description:
      'The current signing secret (`whsec_…`, or the `whsk_…` private key with its `whpk_…` public key for Ed25519) and how many rotated-out secrets still sign (`previous`). Needs `webhooks:write`: reading a secret is as sensitive as changing it.',
    responses: { 200: { secret: 'whsec_QEHYqNO0J2U3J7LaTOY5LgMUc21m4f+mP9TQgwy0Iig=', signatureScheme: 'hmac-sha256', publicKey: null, previous: 0 } },
  },
  'post /v1/endpoints/:id/rotate-secret': {
    description:
      'Makes a new secret, of `signatureScheme` when given (switching between HMAC and Ed25519) or of the current scheme. The secrets it replaces keep signing for 24 h, as extra signatures in `webhook-signature` (the 2 latest at most), so receivers can switch over without losing a request. No body, `{}` or `{signatureScheme}`.',
    request: { signatureScheme: 'hmac-sha256' },
    responses: { 200: { secret: 'whsec_YJSZcG4mZcdtKtz4RKxnGjjv2mQfUFoKdIG2WHl2WXs=', signatureScheme: 'hmac-sha256', publicKey: null, previousSecretValidUntil: '2026-12-03T03:57:29.549Z' } },
  },
  'post /v1/endpoints/:id/pause': {
    description:
      "Pauses an endpoint: nothing is sent to it until it is resumed. Its deliveries that come due meanwhile are held (and sent on resume), failed or cancelled, as its policy's `onEndpointInactive` says; new events make deliveries for it only under a policy that holds. An endpoint its breaker disabled cannot be paused (409 `endpoint_disabled`): resume it instead.",
    responses: { 200: { ...UPDATED_ENDPOINT, status: 'paused', updatedAt: '2026-12-02T03:57:29.562Z' } },
  },
  'post /v1/endpoints/:id/resume': {
    description:
      'Resumes a paused or disabled endpoint and clears its breaker streak; the deliveries held meanwhile are queued again, oldest first (`requeued` says how many). A policy whose breaker re-enables only by re-creating refuses it (409 `recreate_required`): delete the endpoint and create it again.',
    responses: { 200: { ...UPDATED_ENDPOINT, updatedAt: '2026-12-02T03:57:29.706Z', requeued: 0 } },
  },
  'get /v1/endpoints/:id/timeline': {
    description: "The endpoint's own policy (preset or custom) as attempt times: for each attempt, the earliest and latest start in ms after the first, jitter included.",
    responses: { 200: { endpointId: ENDPOINT_ID, policyName: 'standard', attempts: STANDARD_TIMELINE } },
  },
  'get /v1/endpoints/:id/summary': {
    description:
      "An endpoint in plain words, as the customer portal shows it: its state (`tone`, a `headline`, since when, how many deliveries wait, what happens to new ones meanwhile, and the actions the API accepts now), its policy as a sentence, and its last 24 hours: attempts, success rate and hourly counts, oldest first.",
    responses: {
      200: {
        endpointId: FAILING_ENDPOINT_ID,
        policyLabel: 'Retries for up to 1 second (2 attempts) · Switched off after repeated failures',
        state: { tone: 'ok', headline: 'Receiving deliveries', since: null, waiting: 0, meanwhile: null, actions: ['pause', 'send_test'] },
        last24h: { attempts: 2, succeeded: 0, successRate: 0, hourly: hours('2026-12-02T03:00:00.000Z', 24, 2) },
      },
    },
  },
};
