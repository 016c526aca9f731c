/**
 * Records the reference's examples share, taken from the answers of a running Postern (one org,
 * `acme`; an endpoint `billing` that answers 200 and one, `ledger`, that answers 503), so every
 * example shows the same ids and each answer is one the API gives. Tests validate each example
 * against the schema the route documents.
 */
import { PRESETS, policyTimeline } from '@postern/shared';

/** The org `acme`. */
export const ORG_ID = 'org_01M8TECWF7TR12E2V5SBPJ4YJ6';
/** The org's first API key (every scope). */
export const API_KEY_ID = 'key_01M8TECWF7TR12E2V5SBPJ4YJ7';
/** The endpoint `billing`, which answers 200. */
export const ENDPOINT_ID = 'ep_01M8TECY1BKPSVPE4NZPBY1A42';
/** The endpoint `ledger`, which answers 503 (two attempts, 20 ms apart). */
export const FAILING_ENDPOINT_ID = 'ep_01M8TECY9RMA0R9TG0MKWVADPA';
/** An `invoice.paid` event, delivered to both endpoints and a third. */
export const EVENT_ID = 'evt_01M8TECYWJSBNK5MB64R3WZFPH';
/** The event's delivery to `billing`. */
export const DELIVERY_ID = 'dlv_01M8TECYWJSBNK5MB64R3WZFPJ';
/** The event's delivery to `ledger`. */
export const FAILED_DELIVERY_ID = 'dlv_01M8TECYWJSBNK5MB64R3WZFPK';

/** The `standard` preset, resolved (from the presets themselves, so the examples follow them). */
export const STANDARD_POLICY = PRESETS.standard.policy;

/** The `standard` preset as attempt times: the earliest and latest start of each, ms after the first. */
export const STANDARD_TIMELINE = policyTimeline(STANDARD_POLICY);

/** The `billing` endpoint as every answer about it shows it (no secrets). */
export const ENDPOINT = {
  id: ENDPOINT_ID,
  url: 'https://billing.example.com/webhooks',
  description: 'billing service',
  eventTypes: ['invoice.paid', 'invoice.refunded'],
  status: 'active',
  policyName: 'standard',
  policy: STANDARD_POLICY,
  signatureScheme: 'hmac-sha256',
  publicKey: null,
  headers: [],
  auth: null,
  proxy: null,
  createdAt: '2026-12-02T03:57:29.003Z',
  updatedAt: '2026-12-02T03:57:29.003Z',
  consecutiveFailures: 0,
  failureStreakStartedAt: null,
  lastSuccessAt: null,
  lastFailureAt: null,
  failedAttempts: 0,
  consecutiveFailedAttempts: 0,
  disabledAt: null,
  disabledReason: null,
  pace: null,
  pausedUntil: null,
  transformation: null,
};

/** `billing` after `PATCH` gave it a header and a new description. */
export const UPDATED_ENDPOINT = {
  ...ENDPOINT,
  description: 'billing service (EU)',
  headers: [{ name: 'X-Team', value: 'billing', secret: false }],
  updatedAt: '2026-12-02T03:57:29.469Z',
};

/** A delivery that succeeded at its first attempt. */
export const DELIVERY = {
  id: DELIVERY_ID,
  eventId: EVENT_ID,
  eventType: 'invoice.paid',
  endpointId: ENDPOINT_ID,
  status: 'succeeded',
  attemptCount: 1,
  nextAttemptAt: null,
  held: false,
  lastResponseStatus: 200,
  lastError: null,
  lastDurationMs: 65,
  deliveredAt: '2026-12-02T03:57:30.012Z',
  createdAt: '2026-12-02T03:57:29.874Z',
  finishedAt: '2026-12-02T03:57:30.012Z',
  redeliveredFromId: null,
  cancelReason: null,
  isTest: false,
  waitingForNextAttempt: false,
  orderingKey: null,
  sequence: null,
  dataErased: false,
};

/** The same event's delivery to `ledger`, which answered 503 to both attempts its policy allows. */
export const FAILED_DELIVERY = {
  ...DELIVERY,
  id: FAILED_DELIVERY_ID,
  endpointId: FAILING_ENDPOINT_ID,
  status: 'failed',
  attemptCount: 2,
  lastResponseStatus: 503,
  lastError: 'http_503',
  lastDurationMs: 10,
  deliveredAt: null,
  finishedAt: '2026-12-02T03:57:30.170Z',
};

/** A delivery waiting for its second attempt (a `standard` endpoint that answered 503). */
export const WAITING_DELIVERY = {
  ...DELIVERY,
  id: 'dlv_01M8TECYWJSBNK5MB64R3WZFPM',
  endpointId: 'ep_01M8TECYAKE6XBTTSKYQ20ZRVR',
  status: 'pending',
  nextAttemptAt: '2026-12-02T03:57:34.825Z',
  lastResponseStatus: 503,
  lastError: 'http_503',
  lastDurationMs: 67,
  deliveredAt: null,
  finishedAt: null,
  waitingForNextAttempt: true,
};

/** The answer of `POST /v1/events`: the event and one delivery per subscribed endpoint. */
export const ACCEPTED_EVENT = {
  id: EVENT_ID,
  deliveries: [
    { id: DELIVERY_ID, endpointId: ENDPOINT_ID },
    { id: FAILED_DELIVERY_ID, endpointId: FAILING_ENDPOINT_ID },
    { id: WAITING_DELIVERY.id, endpointId: WAITING_DELIVERY.endpointId },
  ],
};

/** The `invoice.paid` entry of the event catalog. */
export const EVENT_TYPE = {
  name: 'invoice.paid',
  description: 'An invoice was paid in full.',
  group: 'billing',
  schema: { type: 'object', required: ['invoiceId', 'amountCents'], properties: { invoiceId: { type: 'string' }, amountCents: { type: 'integer', minimum: 0 } } },
  examples: [{ invoiceId: 'in_1042', amountCents: 4200 }],
  deprecated: false,
  archived: false,
  version: 1,
  createdAt: '2026-12-02T03:57:28.793Z',
  updatedAt: '2026-12-02T03:57:28.793Z',
};

/** A catalog entry without a schema. */
export const EVENT_TYPE_WITHOUT_SCHEMA = {
  name: 'invoice.voided',
  description: 'An invoice was voided.',
  group: null,
  schema: null,
  examples: [],
  deprecated: false,
  archived: false,
  version: 1,
  createdAt: '2026-12-02T03:57:28.909Z',
  updatedAt: '2026-12-02T03:57:28.909Z',
};

/** A portal session as every answer but the one creating it shows it. */
export const PORTAL_SESSION = {
  id: 'ps_01M8TECWZKNH3RWY3PWZMHS5DF',
  orgId: ORG_ID,
  scopes: ['webhooks:read'],
  mode: 'customer',
  createdAt: '2026-12-02T03:57:27.923Z',
  expiresAt: '2026-12-02T04:57:27.923Z',
  revokedAt: null,
};

/** A platform key record (prefix only). */
export const PLATFORM_KEY = {
  id: 'pfk_01M8TECX5TY62GC5YN52YTMDRY',
  name: 'billing-saas',
  prefix: 'TWI6ZNvi',
  scopes: ['events:write', 'webhooks:read'],
  createdAt: '2026-12-02T03:57:28.122Z',
  revokedAt: null,
};

/** An API key record (prefix only). */
export const API_KEY = {
  id: 'key_01M8TECXNF4DR3YY77BR6KAHTP',
  name: 'producer',
  prefix: 'sPstJowP',
  scopes: ['events:write'],
  createdAt: '2026-12-02T03:57:28.623Z',
  revokedAt: null,
};

/** The org's settings as `GET /v1/org` shows them. */
export const ORG_SETTINGS = {
  id: ORG_ID,
  name: 'acme',
  status: 'active',
  createdAt: '2026-12-02T03:57:27.399Z',
  disabledEventTypes: [],
  preAttemptCheckUrl: null,
  eventValidation: 'off',
  requireKnownEventTypes: false,
  portal: { displayName: null, logoUrl: null, accentColor: null, supportUrl: null },
  portalPolicies: { presets: ['standard'], fields: [] },
};
