import type { RouteReference } from './route-reference.js';
import { API_KEY_ID, EVENT_ID, FAILING_ENDPOINT_ID } from './samples.js';

/** The org's audit log. */
export const AUDIT_LOG_DOCS: Record<string, RouteReference> = {
  'get /v1/audit-log': {
    description:
      "Who changed what through the API in the org, newest first, kept 90 days: each entry names the actor (an API key, a platform key, a portal session or the admin token), the action, its target, the fields it changed (never their values) and the request's id. Filter by `action`, `target` (an id), `actor` (an id, or `admin`) and time (`since`, `until`). A page may be short when filters match sparsely: follow `nextCursor` until it is null. A portal session cannot read it (403 `api_key_required`).",
    responses: {
      200: {
        data: [
          { id: 'aud_01M8TED1XM8J0G73GA09QJ8HA5', at: '2026-12-02T03:57:32.980Z', actor: { kind: 'api_key', id: API_KEY_ID, name: 'first key' }, action: 'event.data_erased', target: { type: 'event', id: EVENT_ID }, changes: ['data', 'deliveries.status'], requestId: 'req_ce04138f-26be-45b0-948a-3602466adae6' },
          { id: 'aud_01M8TECZXKN2JHPYEZRQVNXM32', at: '2026-12-02T03:57:30.931Z', actor: { kind: 'api_key', id: API_KEY_ID, name: 'first key' }, action: 'endpoint.recovered', target: { type: 'endpoint', id: FAILING_ENDPOINT_ID }, changes: [], requestId: 'req_628d0115-888a-43af-a452-8ac831e02d81' },
        ],
        nextCursor: '1796183850931-0',
      },
    },
  },
};
