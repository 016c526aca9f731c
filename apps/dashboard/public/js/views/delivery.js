// One delivery: its event, every attempt with the request sent and the response received, Send now
// and Redeliver (only where the API would accept them). A redelivery links to its original.
import { actionButton } from '../actions.js';
import { badge, facts, h, num, table } from '../dom.js';
import { duration, relative, time } from '../format.js';
import { envelopeBlock } from './envelope.js';

const FINAL = ['succeeded', 'failed', 'cancelled'];

function eventSection(event, error) {
  if (error) return h('p', { class: 'error-box' }, error.sentence ?? 'The event could not be loaded.');
  return [
    h(
      'div',
      { class: 'card' },
      facts([
        ['Event id', h('a', { href: `#/events/${encodeURIComponent(event.id)}`, class: 'mono', id: 'event-link' }, event.id), true],
        ['Type', event.type],
        ['Timestamp', time(event.timestamp)],
        ['Idempotency key', event.idempotencyKey],
        ['Deliveries of this event', String(event.deliveries.length)],
      ]),
    ),
    envelopeBlock(event.envelope),
  ];
}

function headerList(headers, id) {
  return h('pre', { class: 'headers', id, tabindex: '0' }, Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n'));
}

/** The exchange of one attempt: the request headers sent, the response's status, headers and body excerpt. */
function attemptDetail(a, policy, wanted) {
  const kept = policy?.keepResponseBody ?? 'failed';
  const noResponse = a.responseStatus === null
    ? 'No response: the attempt ended before an answer came back.'
    : kept === 'none'
      ? 'This endpoint’s policy keeps the status only, not the response’s headers or body.'
      : kept === 'failed' && !a.error
        ? 'This endpoint’s policy keeps the response’s headers and body of failed attempts only.'
        : 'Nothing of the response was kept.';
  return h(
    'details',
    { class: 'attempt', id: `attempt-${a.number}`, open: Boolean(a.error) || a.number === wanted, 'data-wanted': a.number === wanted ? 'true' : undefined },
    h('summary', null, `Attempt #${a.number}: `, a.responseStatus === null ? 'no response' : `HTTP ${a.responseStatus}`, a.error ? [' · ', h('code', null, a.error)] : a.cancelReason ? [' · cancelled ', h('code', null, a.cancelReason)] : ' · succeeded'),
    h('div', { class: 'exchange' },
      h(
        'div',
        null,
        a.transformation
          ? h('p', { class: 'transformation-version', id: `transformation-version-${a.number}` }, `Transformation version ${a.transformation.version}`, a.transformation.request ? `: ${a.transformation.request.method} ${a.transformation.request.url}` : ' (nothing sent)')
          : null,
        h('h3', null, 'Request headers sent'),
        a.requestHeaders ? headerList(a.requestHeaders, `request-headers-${a.number}`) : h('p', { class: 'hint' }, 'Nothing was sent (the attempt stopped before the request).'),
        a.transformation?.request
          ? [h('h3', null, 'Body sent'), h('pre', { class: 'json', id: `request-body-${a.number}`, tabindex: '0' }, a.transformation.request.body + (a.transformation.request.bodyTruncated ? '…' : ''))]
          : null,
      ),
      h(
        'div',
        null,
        h('h3', null, 'Response'),
        a.response
          ? [
              h('p', null, `Status ${a.responseStatus}`),
              headerList(a.response.headers, `response-headers-${a.number}`),
              a.response.headersTruncated ? h('p', { class: 'hint' }, 'More headers were received than are kept.') : null,
              h('p', { class: 'hint' }, a.response.bodyTruncated ? `Body, first ${new TextEncoder().encode(a.response.body).length} bytes (the policy reads no more):` : 'Body:'),
              h('pre', { class: 'json', id: `response-body-${a.number}`, tabindex: '0' }, a.response.body === '' ? '(empty)' : a.response.body),
            ]
          : h('p', { class: 'hint' }, noResponse),
      ),
    ),
  );
}

/** Whether the API would accept a redelivery now (see POST /v1/deliveries/:id/redeliver). */
function canRedeliver(delivery, endpoint) {
  if (!endpoint || endpoint.status !== 'active' || !endpoint.policy.redelivery.allowed) return false;
  if (delivery.status === 'in_flight') return false;
  return FINAL.includes(delivery.status) || endpoint.policy.redelivery.whilePending;
}

/** `#/deliveries/:id` */
export async function deliveryView(ctx) {
  const [id] = ctx.params;
  const delivery = await ctx.api.get(`/v1/deliveries/${encodeURIComponent(id)}`);
  const [event, endpoint] = await Promise.all([
    ctx.api.get(`/v1/events/${encodeURIComponent(delivery.eventId)}`).catch((err) => ({ error: err })),
    ctx.api.get(`/v1/endpoints/${encodeURIComponent(delivery.endpointId)}`).catch(() => null),
  ]);
  // Follow an unfinished delivery, except one held for its endpoint: it waits for a resume, not for time.
  if (!FINAL.includes(delivery.status) && !delivery.held) ctx.live({ endpointId: delivery.endpointId }, { fallbackMs: 1000, onChange: (change) => change.deliveryId === delivery.id });

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
    !FINAL.includes(delivery.status) && !delivery.held ? h('p', { class: 'hint' }, 'In progress; this page follows its attempts as they finish.') : null,
    h(
      'div',
      { class: 'card' },
      facts([
        ['Status', [badge(delivery.status), delivery.held ? h('span', { class: 'tag' }, 'held') : null, delivery.isTest ? h('span', { class: 'tag' }, 'test') : null]],
        ['Event type', delivery.eventType],
        ['Ordering key', delivery.orderingKey ? [h('code', null, delivery.orderingKey), delivery.sequence ? ` · sequence ${delivery.sequence}` : null] : null],
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
    ctx.canWrite && (delivery.waitingForNextAttempt || canRedeliver(delivery, endpoint))
      ? h(
          'div',
          { class: 'actions' },
          delivery.waitingForNextAttempt
            ? actionButton(ctx, {
                id: 'send-now',
                label: '▶ Send now',
                className: 'primary',
                run: () => ctx.api.post(`/v1/deliveries/${encodeURIComponent(delivery.id)}/send-now`),
                done: () => {
                  ctx.notify(`Attempt #${delivery.attemptCount + 1} is being sent now; the attempts after it keep the policy's schedule.`);
                  return ctx.reload();
                },
              })
            : null,
          canRedeliver(delivery, endpoint)
            ? actionButton(ctx, {
                id: 'redeliver',
                label: '↻ Redeliver',
                className: delivery.waitingForNextAttempt ? undefined : 'primary',
                run: () => ctx.api.post(`/v1/deliveries/${encodeURIComponent(delivery.id)}/redeliver`),
                done: (r) => ctx.navigate(`#/deliveries/${encodeURIComponent(r.delivery.id)}`, ['Redelivery queued: a new delivery of the same event, starting at attempt 1.', 'ok']),
              })
            : null,
        )
      : null,
    h('h2', null, 'Attempts'),
    attempts.length === 0
      ? h('p', { class: 'empty card' }, 'No attempt yet.')
      : table(
          'Attempts, first to last',
          ['Attempt', 'Started', 'Duration', 'Response status', 'Error code', 'Transformation'],
          attempts.map((a) => ({
            cells: [num(`#${a.number}`), time(a.startedAt), num(a.durationMs === null ? 'in flight' : duration(a.durationMs)), num(a.responseStatus), a.error ? h('code', null, a.error) : a.cancelReason ? h('code', null, a.cancelReason) : a.durationMs === null ? '—' : '✓ none', a.transformation ? `v${a.transformation.version}` : '—'],
          })),
        ),
    attempts.filter((a) => a.durationMs !== null).map((a) => attemptDetail(a, endpoint?.policy, Number(ctx.query.get('attempt')) || null)),
    h('h2', null, 'Event'),
    eventSection(event.error ? null : event, event.error),
  );
}
