// One delivery: its event, every attempt, and Redeliver. A redelivery links to its original.
import { actionButton } from '../actions.js';
import { badge, facts, h, num, table } from '../dom.js';
import { duration, relative, time } from '../format.js';

const FINAL = ['succeeded', 'failed', 'cancelled'];

function eventSection(event, error) {
  if (error) return h('p', { class: 'error-box' }, error.sentence ?? 'The event could not be loaded.');
  return h(
    'div',
    { class: 'card' },
    facts([
      ['Event id', h('code', null, event.id), true],
      ['Type', event.type],
      ['Timestamp', time(event.timestamp)],
      ['Idempotency key', event.idempotencyKey],
      ['Deliveries of this event', String(event.deliveryIds.length)],
    ]),
    h('h3', { class: 'visually-hidden' }, 'Data'),
    h('p', { class: 'hint' }, 'data, as sent in the body:'),
    h('pre', { class: 'json', tabindex: '0', 'aria-label': 'Event data' }, JSON.stringify(event.data, null, 2)),
  );
}

/** `#/deliveries/:id` */
export async function deliveryView(ctx) {
  const [id] = ctx.params;
  const delivery = await ctx.api.get(`/v1/deliveries/${encodeURIComponent(id)}`);
  const [event, endpoint] = await Promise.all([
    ctx.api.get(`/v1/events/${encodeURIComponent(delivery.eventId)}`).catch((err) => ({ error: err })),
    ctx.api.get(`/v1/endpoints/${encodeURIComponent(delivery.endpointId)}`).catch(() => null),
  ]);
  if (!FINAL.includes(delivery.status)) ctx.every(1000, () => ctx.reload());

  const endpointHref = `#/endpoints/${encodeURIComponent(delivery.endpointId)}`;
  const attempts = delivery.attempts;
  return h(
    'section',
    null,
    h(
      'nav',
      { class: 'crumbs', 'aria-label': 'Breadcrumb' },
      h('a', { href: '#/endpoints' }, 'Endpoints'),
      ' › ',
      h('a', { href: endpointHref }, endpoint?.url ?? delivery.endpointId),
      ' › ',
      h('span', { 'aria-current': 'page' }, 'Delivery'),
    ),
    h('div', { class: 'page-head' }, h('h1', null, 'Delivery ', h('code', null, delivery.id)), h('span', { id: 'delivery-status' }, badge(delivery.status))),
    delivery.redeliveredFromId
      ? h('p', { class: 'subtitle', id: 'redelivery-of' }, '↻ Redelivery of ', h('a', { href: `#/deliveries/${encodeURIComponent(delivery.redeliveredFromId)}`, id: 'original-link', class: 'mono' }, delivery.redeliveredFromId), '. It started again at attempt 1.')
      : null,
    !FINAL.includes(delivery.status) ? h('p', { class: 'hint' }, 'In progress; this page refreshes itself every second.') : null,
    h(
      'div',
      { class: 'card' },
      facts([
        ['Status', [badge(delivery.status), delivery.held ? h('span', { class: 'tag' }, 'held') : null, delivery.isTest ? h('span', { class: 'tag' }, 'test') : null]],
        ['Event type', delivery.eventType],
        ['Endpoint', h('a', { href: endpointHref, class: 'link-out' }, endpoint?.url ?? delivery.endpointId)],
        ['Attempts', String(delivery.attemptCount)],
        ['Next attempt', delivery.nextAttemptAt ? [time(delivery.nextAttemptAt), ` (${relative(delivery.nextAttemptAt)})`] : null],
        ['Last error', delivery.lastError ? h('code', null, delivery.lastError) : null],
        ['Last response status', delivery.lastResponseStatus === null ? null : String(delivery.lastResponseStatus)],
        ['Delivered at', time(delivery.deliveredAt)],
        ['Created', time(delivery.createdAt)],
        ['Finished', time(delivery.finishedAt)],
        ['Cancel reason', delivery.cancelReason],
      ]),
    ),
    ctx.canWrite
      ? h(
          'div',
          { class: 'actions' },
          actionButton(ctx, {
            id: 'redeliver',
            label: '↻ Redeliver',
            className: 'primary',
            run: () => ctx.api.post(`/v1/deliveries/${encodeURIComponent(delivery.id)}/redeliver`),
            done: (r) => ctx.navigate(`#/deliveries/${encodeURIComponent(r.delivery.id)}`, ['Redelivery queued: a new delivery of the same event, starting at attempt 1.', 'ok']),
          }),
        )
      : null,
    h('h2', null, 'Attempts'),
    attempts.length === 0
      ? h('p', { class: 'empty card' }, 'No attempt yet.')
      : table(
          'Attempts, first to last',
          ['Attempt', 'Started', 'Duration', 'Response status', 'Error code'],
          attempts.map((a) => ({
            cells: [num(`#${a.number}`), time(a.startedAt), num(a.durationMs === null ? 'in flight' : duration(a.durationMs)), num(a.responseStatus), a.error ? h('code', null, a.error) : a.durationMs === null ? '—' : '✓ none'],
          })),
        ),
    h('h2', null, 'Event'),
    eventSection(event.error ? null : event, event.error),
  );
}
