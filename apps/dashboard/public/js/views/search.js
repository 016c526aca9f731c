// One search box for any id an operator pastes: an event, a delivery, an endpoint, or else an
// idempotency key (looked up among the org's events).
import { h } from '../dom.js';

/** Where a pasted value leads: `evt_…`, `dlv_…`, `ep_…` open that record; anything else is an idempotency key. */
export function searchTarget(value) {
  const v = value.trim();
  if (/^evt_[0-9A-Za-z]+$/.test(v)) return `#/events/${encodeURIComponent(v)}`;
  if (/^dlv_[0-9A-Za-z]+$/.test(v)) return `#/deliveries/${encodeURIComponent(v)}`;
  // A webhook-request-id (`<delivery id>.<attempt>`, what a receiver logs): that delivery.
  const request = /^(dlv_[0-9A-Za-z]+)\.(\d+)$/.exec(v);
  if (request) return `#/deliveries/${encodeURIComponent(request[1])}?attempt=${request[2]}`;
  if (/^ep_[0-9A-Za-z]+$/.test(v)) return `#/endpoints/${encodeURIComponent(v)}`;
  return `#/events?idempotencyKey=${encodeURIComponent(v)}`;
}

/** The search form; `go(hash)` navigates. */
export function searchForm(go) {
  const input = h('input', { id: 'search', name: 'q', type: 'search', placeholder: 'Event, delivery, request or endpoint id, or idempotency key', autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Search by id, webhook-request-id or idempotency key' });
  return h(
    'form',
    {
      class: 'search',
      role: 'search',
      onsubmit: (e) => {
        e.preventDefault();
        if (!input.value.trim()) return;
        go(searchTarget(input.value));
        input.value = '';
      },
    },
    input,
    h('button', { type: 'submit', id: 'search-go' }, 'Find'),
  );
}
