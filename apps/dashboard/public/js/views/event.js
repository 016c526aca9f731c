// One event: its facts, the exact envelope bytes sent, and every delivery of it (redeliveries too).
import { badge, facts, h, num, table } from '../dom.js';
import { shortId, time } from '../format.js';
import { envelopeBlock } from './envelope.js';

/** `#/events/:id` */
export async function eventView(ctx) {
  const [id] = ctx.params;
  const [event, endpoints] = await Promise.all([ctx.api.get(`/v1/events/${encodeURIComponent(id)}`), ctx.api.get('/v1/endpoints?limit=100')]);
  const urls = new Map(endpoints.data.map((e) => [e.id, e.url]));
  const rows = event.deliveries.map((d) => ({
    cells: [
      [h('a', { href: `#/deliveries/${encodeURIComponent(d.id)}`, class: 'mono' }, shortId(d.id)), d.redeliveredFromId ? h('span', { class: 'tag' }, '↻ redelivery') : null],
      h('a', { href: `#/endpoints/${encodeURIComponent(d.endpointId)}` }, urls.get(d.endpointId) ?? d.endpointId),
      [badge(d.status), d.held ? h('span', { class: 'tag' }, 'held') : null],
      num(d.attemptCount),
      d.lastError ? h('code', null, d.lastError) : d.cancelReason ? h('code', { class: 'cancel-reason' }, d.cancelReason) : '—',
      time(d.createdAt),
    ],
  }));
  return h(
    'section',
    null,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/events' }, 'Events'), ' › ', h('span', { 'aria-current': 'page' }, 'Event')),
    h('h1', null, 'Event ', h('code', null, event.id)),
    h(
      'div',
      { class: 'card' },
      facts([
        ['Type', event.type],
        ['Timestamp', time(event.timestamp)],
        ['Idempotency key', event.idempotencyKey ? h('code', { id: 'event-idempotency-key' }, event.idempotencyKey) : null],
        ['Deliveries', String(event.deliveries.length)],
      ]),
    ),
    h('h2', null, 'Deliveries'),
    rows.length === 0
      ? h('p', { class: 'empty card' }, 'No endpoint was subscribed to this event type when it was sent.')
      : table('Every delivery of this event, oldest first', ['Delivery', 'Endpoint', 'Status', 'Attempts', 'Last error', 'Created'], rows, 'event-deliveries'),
    h('h2', null, 'Body sent'),
    envelopeBlock(event.envelope),
  );
}
