import { PRESETS, policyChoiceLabel } from '@postern/shared';
import type { RouteReference } from './route-reference.js';
import { API_KEY, API_KEY_ID, ORG_ID, ORG_SETTINGS, PLATFORM_KEY, PORTAL_SESSION } from './samples.js';

const PORTAL_TOKEN = 'pst_U48Xo1JKwpheTZUpqAXHXqOKaT14G6dwt9FS6icdS1c';

/** Orgs and their settings, portal sessions and what the portal shows, platform keys, API keys, the instance's audit log. */
export const ORG_DOCS: Record<string, RouteReference> = {
  'post /v1/orgs': {
    description:
      'Creates an org (a tenant: its endpoints, events and deliveries are seen by nobody else) and its first API key, which holds every scope. The key is in this answer only: Postern keeps its SHA-256 and its prefix.',
    request: { name: 'acme' },
    responses: { 201: { id: ORG_ID, name: 'acme', createdAt: '2026-12-02T03:57:27.399Z', apiKey: 'pk_7_-xRWfR9D4T0JnV0yiL9CA1JFqpthM9a0joYYhNRFs' } },
  },
  'post /v1/orgs/:id/suspend': {
    description:
      "Suspends an org: its API keys, platform keys acting for it and portal sessions get 403 `org_suspended` from the next request on, and before each attempt its queued deliveries are cancelled, held or failed with `org_suspended`, as each endpoint's policy says (`onEndpointInactive`). Suspending a suspended org changes nothing.",
    responses: { 200: { id: 'org_01M8TECWQA727NZBHH1GRRCD8E', name: 'globex', status: 'suspended', createdAt: '2026-12-02T03:57:27.658Z' } },
  },
  'post /v1/orgs/:id/reactivate': {
    description:
      "Lets a suspended org's credentials in again. Deliveries held while it was suspended wait for their endpoint's resume (`POST /v1/endpoints/:id/resume` re-queues held deliveries, oldest first); those cancelled or failed stay so and can be redelivered.",
    responses: { 200: { id: 'org_01M8TECWQA727NZBHH1GRRCD8E', name: 'globex', status: 'active', createdAt: '2026-12-02T03:57:27.658Z' } },
  },
  'post /v1/orgs/:id/portal-sessions': {
    description:
      "Mints a customer portal session for the org: `token` (`pst_…`, in this answer only) is a bearer credential of that org, within `scopes` (default `webhooks:read`), until `expiresAt` (`ttlSeconds`, default an hour). `url` opens the dashboard signed in with it; the token is in the URL's fragment, which browsers never send to a server. `mode: operator` shows the full console rather than the customer view. The admin token may mint any scopes; a platform key needs `webhooks:read` and every scope it grants.",
    request: { ttlSeconds: 3600, scopes: ['webhooks:read'] },
    responses: { 201: { ...PORTAL_SESSION, token: PORTAL_TOKEN, url: `http://localhost:3000/dashboard/portal#session=${PORTAL_TOKEN}` } },
  },
  'get /v1/orgs/:id/portal-sessions/:sessionId': {
    description: 'A portal session of the org, never its token. Sessions are kept until a day after they expire; then 404.',
    responses: { 200: PORTAL_SESSION },
  },
  'delete /v1/orgs/:id/portal-sessions/:sessionId': {
    description: 'Revokes a portal session: its token gets 401 `session_revoked` from the next request on, and its live streams end.',
    responses: { 200: { ...PORTAL_SESSION, revokedAt: '2026-12-02T03:57:28.085Z' } },
  },

  'get /v1/platform-audit-log': {
    description:
      "The instance's own audit log, newest first: platform keys created and revoked, by the admin token. Filters as `GET /v1/audit-log`. A page may be short when filters match sparsely: follow `nextCursor` until it is null.",
    responses: {
      200: {
        data: [
          { id: 'aud_01M8TECXBN4DQ0W54KZQ1XVV2Q', at: '2026-12-02T03:57:28.309Z', actor: { kind: 'admin', id: 'admin', name: 'admin token' }, action: 'platform_key.revoked', target: { type: 'platform_key', id: PLATFORM_KEY.id }, changes: ['revokedAt'], requestId: 'req_82c7905a-3b58-439f-a654-7e37bef8e39a' },
          { id: 'aud_01M8TECX6EX7HA4C74CYMH5X2K', at: '2026-12-02T03:57:28.142Z', actor: { kind: 'admin', id: 'admin', name: 'admin token' }, action: 'platform_key.created', target: { type: 'platform_key', id: PLATFORM_KEY.id }, changes: ['name', 'scopes'], requestId: 'req_36133cce-bef2-436c-b22a-3fcc5a9987ee' },
        ],
        nextCursor: null,
      },
    },
  },
  'post /v1/platform-keys': {
    description:
      "Creates a platform key: one credential for a platform that gives each of its customers an org. It acts for whichever org a request names in `Postern-Org`, within its scopes, and is confined to that org exactly as the org's own API key would be. The key is in this answer only.",
    request: { name: 'billing-saas', scopes: ['events:write', 'webhooks:read'] },
    responses: { 201: { ...PLATFORM_KEY, key: 'ppk_TWI6ZNvic3nm-o8wVqTqScr4CuJNXMvR96hi7zfXeac' } },
  },
  'get /v1/platform-keys': {
    description: 'Every platform key of the instance, newest first, revoked ones included; the prefix (the 8 characters after `ppk_`) only, never the key.',
    responses: { 200: { data: [PLATFORM_KEY], nextCursor: null } },
  },
  'delete /v1/platform-keys/:id': {
    description: 'Revokes a platform key at once: Postern reads the key on every request, so the next one with it gets 401.',
    responses: { 200: { ...PLATFORM_KEY, revokedAt: '2026-12-02T03:57:28.273Z' } },
  },

  'get /v1/org': {
    description:
      "The calling org's settings: event types switched off, the pre-attempt check URL, how the event catalog validates new events, the customer portal's branding and the policies portal customers may pick.",
    responses: { 200: ORG_SETTINGS },
  },
  'patch /v1/org': {
    description: [
      "Changes any of the org's settings; the answer is the settings as `GET /v1/org` shows them.",
      '',
      '- `disabledEventTypes`: up to 100 exact types or `prefix.*` groups. Deliveries of those types are cancelled before their next attempt with `event_type_disabled`, and new events of them get no delivery; switching a type back on (`[]` for all) replays nothing.',
      '- `preAttemptCheckUrl`: a URL Postern asks before the attempts whose policy says `preAttemptCheck: first` or `every`; checked like an endpoint URL (400 `unsafe_url` for a literal non-public address); `null` removes it. The first one set makes the secret that signs its requests (`GET /v1/org/check-secret`).',
      "- `eventValidation` (`off`, `warn` or `reject`: what happens to an event whose `data` fails its catalog schema) and `requireKnownEventTypes` (refuse types outside the catalog).",
      '- `portal`: branding merged into what is stored (`displayName`, `logoUrl`, `accentColor`, `supportUrl`; a field set to `null` is cleared). The accent must reach 4.5:1 against white (WCAG AA), else 400 naming its ratio.',
      '- `portalPolicies`: the presets and policy fields portal customers may pick; `null` restores the default.',
      '',
      'A portal session cannot change these (403 `api_key_required`).',
    ].join('\n'),
    request: { disabledEventTypes: ['report.*'], eventValidation: 'warn', preAttemptCheckUrl: 'https://checks.example.com/postern' },
    responses: { 200: { ...ORG_SETTINGS, disabledEventTypes: ['report.*'], preAttemptCheckUrl: 'https://checks.example.com/postern', eventValidation: 'warn' } },
  },
  'get /v1/portal': {
    description:
      "What the customer portal shows for the caller: its mode (`customer` for a portal session in customer mode, else `operator`), the org's branding (with `accentText`, the text colour that reads on its accent), and the policy choices customers may pick, each in plain words, with the policy fields they may set.",
    responses: {
      200: {
        mode: 'customer',
        branding: { displayName: null, logoUrl: null, accentColor: null, supportUrl: null, accentText: null },
        policies: [{ name: 'standard', label: policyChoiceLabel(PRESETS.standard.policy) }],
        fields: [],
      },
    },
  },
  'get /v1/org/check-secret': {
    description:
      "The `whsec_…` secret that signs Postern's requests to the org's pre-attempt check URL (Standard Webhooks, as deliveries are signed), so the check can verify they come from Postern; null before a check URL was first set. A portal session cannot read it (403 `api_key_required`).",
    responses: { 200: { secret: 'whsec_Xa2zfLgru/ja4e/dxMG6+pjzzdme+dD1xWEORrMEj7o=' } },
  },

  'get /v1/me': {
    description:
      'Who the caller is and what it may do: its org and scopes, and which credential it used (`api_key`, `platform_key` or `portal_session`). Needs no scope, so any valid credential can ask; a portal session answers with no key id and with its own id, expiry and mode.',
    responses: { 200: { orgId: ORG_ID, keyId: API_KEY_ID, name: 'first key', prefix: '7_-xRWfR', scopes: ['events:write', 'webhooks:read', 'webhooks:write'], credential: 'api_key', portalSession: null } },
  },
  'post /v1/api-keys': {
    description:
      "Creates an API key of the caller's org with the scopes given (`events:write`, `webhooks:read`, `webhooks:write`); a key can grant only scopes it holds itself (else 403 `insufficient_scope`). The key is in this answer only: Postern keeps its SHA-256 and its prefix. A portal session cannot manage keys (403 `api_key_required`).",
    request: { name: 'producer', scopes: ['events:write'] },
    responses: { 201: { ...API_KEY, apiKey: 'pk_sPstJowPp48ueOmCRO8im5itX4EMAQtHuz4JpnRLaC8' } },
  },
  'get /v1/api-keys': {
    description: "The org's API keys, newest first, revoked ones included: the prefix (the 8 characters after `pk_`) only, never the key.",
    responses: { 200: { data: [API_KEY, { id: API_KEY_ID, name: 'first key', prefix: '7_-xRWfR', scopes: ['events:write', 'webhooks:read', 'webhooks:write'], createdAt: '2026-12-02T03:57:27.399Z', revokedAt: null }], nextCursor: null } },
  },
  'delete /v1/api-keys/:id': {
    description: 'Revokes an API key at once: its next request gets 401 `unauthorized`, and its live streams end.',
    responses: { 200: { ...API_KEY, revokedAt: '2026-12-02T03:57:28.756Z' } },
  },
};
