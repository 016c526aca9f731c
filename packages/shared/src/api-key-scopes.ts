/**
 * What an API key may do. Each route of the v1 API needs exactly one scope (or none, for
 * `GET /v1/me`); a key without it gets 403 `insufficient_scope`. Scopes do not imply each other:
 * a key that should read and write holds both webhooks scopes.
 *
 * - `events:write`: post events (`POST /v1/events`).
 * - `webhooks:read`: read endpoints, deliveries, events, notifications, timelines, API keys.
 * - `webhooks:write`: create, change and delete endpoints; pause, resume, test, rotate secrets,
 *   read secrets, redeliver; create and revoke API keys.
 */
export type ApiKeyScope = 'events:write' | 'webhooks:read' | 'webhooks:write';

/** Every scope, in the order the API lists them; the key made by `POST /v1/orgs` holds all. */
export const API_KEY_SCOPES: readonly ApiKeyScope[] = Object.freeze(['events:write', 'webhooks:read', 'webhooks:write']);

/** True when `value` names a scope. */
export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === 'string' && (API_KEY_SCOPES as readonly string[]).includes(value);
}
