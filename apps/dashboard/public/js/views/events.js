// The org's events, newest first, with filters (type, idempotency key, endpoint, time) and paging.
import { h, num, table } from '../dom.js';
import { shortId, time } from '../format.js';

const FILTERS = ['type', 'idempotencyKey', 'endpointId', 'since', 'until'];

function listHash(filters, cursor) {
  const q = new URLSearchParams();
  for (const f of FILTERS) if (filters[f]) q.set(f, filters[f]);
  if (cursor) q.set('cursor', cursor);
  const search = q.toString();
  return `#/events${search ? `?${search}` : ''}`;
}

/** `datetime-local` value (local time) → ISO 8601, or '' when empty. */
function toIso(local) {
  return local ? new Date(local).toISOString() : '';
}

function toLocal(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** `#/events[?type=&idempotencyKey=&endpointId=&since=&until=&cursor=]` */
export async function eventsView(ctx) {
  const filters = Object.fromEntries(FILTERS.map((f) => [f, ctx.query.get(f) ?? '']));
  const cursor = ctx.query.get('cursor') ?? '';
  const q = new URLSearchParams({ limit: '25' });
  for (const f of FILTERS) if (filters[f]) q.set(f, filters[f]);
  if (cursor) q.set('cursor', cursor);
  const [page, endpoints] = await Promise.all([ctx.api.get(`/v1/events?${q}`), ctx.api.get('/v1/endpoints?limit=100')]);

  const field = (id, label, control) => h('div', { class: 'field' }, h('label', { for: id }, label), control);
  const type = h('input', { id: 'filter-type', name: 'type', value: filters.type, placeholder: 'invoice.paid' });
  const key = h('input', { id: 'filter-key', name: 'idempotencyKey', value: filters.idempotencyKey });
  const endpoint = h('select', { id: 'filter-endpoint', name: 'endpointId' }, h('option', { value: '' }, 'Any endpoint'), endpoints.data.map((e) => h('option', { value: e.id, selected: e.id === filters.endpointId }, e.url)));
  const since = h('input', { id: 'filter-since', name: 'since', type: 'datetime-local', value: toLocal(filters.since) });
  const until = h('input', { id: 'filter-until', name: 'until', type: 'datetime-local', value: toLocal(filters.until) });
  const apply = () => ctx.navigate(listHash({ type: type.value.trim(), idempotencyKey: key.value.trim(), endpointId: endpoint.value, since: toIso(since.value), until: toIso(until.value) }, ''));
  // Selects and dates apply as soon as they change; text fields on Enter or the button.
  for (const control of [endpoint, since, until]) control.addEventListener('change', apply);
  const form = h(
    'form',
    { class: 'toolbar filters', onsubmit: (e) => (e.preventDefault(), apply()) },
    field('filter-type', 'Event type', type),
    field('filter-key', 'Idempotency key', key),
    field('filter-endpoint', 'Endpoint', endpoint),
    field('filter-since', 'From', since),
    field('filter-until', 'Until', until),
    h('button', { type: 'submit', id: 'apply-filters' }, 'Search'),
    FILTERS.some((f) => filters[f]) ? h('a', { class: 'button', href: '#/events', id: 'clear-filters' }, 'Clear') : null,
  );

  const rows = page.data.map((e) => ({
    cells: [h('a', { href: `#/events/${encodeURIComponent(e.id)}`, class: 'mono', id: `evt-${e.id}` }, shortId(e.id)), e.type, e.idempotencyKey ? h('code', null, e.idempotencyKey) : '—', num(e.deliveryCount), time(e.createdAt)],
  }));
  const filtered = FILTERS.some((f) => filters[f]);
  return h(
    'section',
    null,
    h('div', { class: 'page-head' }, h('h1', null, 'Events')),
    h('p', { class: 'subtitle' }, 'Every event your organisation sent, newest first. Paste any id or idempotency key in the search box above to jump to it.'),
    form,
    rows.length === 0
      ? h('p', { class: 'empty card', id: 'no-events' }, filtered ? `No events match these filters${cursor ? ' on this page' : ''}.` : 'No events yet.')
      : table('Events, newest first', ['Event', 'Type', 'Idempotency key', 'Deliveries', 'Created'], rows, 'events-table'),
    h(
      'div',
      { class: 'pager' },
      cursor ? h('a', { class: 'button', href: listHash(filters, '') }, '← Newest') : null,
      page.nextCursor ? h('a', { class: 'button', id: 'older', href: listHash(filters, page.nextCursor) }, 'Older events →') : null,
    ),
  );
}
