// Notifications: endpoints that a breaker paused or disabled, newest first.
import { badge, h, num, table } from '../dom.js';
import { time } from '../format.js';

/** `#/notifications[?cursor=]` */
export async function notificationsView(ctx) {
  const cursor = ctx.query.get('cursor');
  const page = await ctx.api.get(`/v1/notifications?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  const rows = page.data.map((n) => ({
    cells: [
      time(n.createdAt),
      badge(n.kind === 'endpoint.paused' ? 'paused' : 'disabled', n.kind === 'endpoint.paused' ? 'endpoint paused' : 'endpoint disabled'),
      h('a', { href: `#/endpoints/${encodeURIComponent(n.endpointId)}` }, n.endpointUrl || n.endpointId),
      n.reason,
      num(n.consecutiveFailures),
      num(n.deliveriesAffected),
    ],
  }));
  return h(
    'section',
    null,
    h('h1', null, 'Notifications'),
    h('p', { class: 'subtitle' }, 'Endpoints that kept failing until their policy’s breaker paused or disabled them, newest first.'),
    rows.length === 0
      ? h('p', { class: 'empty card' }, cursor ? 'No older notifications.' : 'No notifications: no endpoint has been paused or disabled by its breaker.')
      : table('Notifications', ['When', 'What', 'Endpoint', 'Reason', 'Consecutive failures', 'Deliveries affected'], rows),
    h(
      'div',
      { class: 'pager' },
      cursor ? h('a', { class: 'button', href: '#/notifications' }, '← Newest') : null,
      page.nextCursor ? h('a', { class: 'button', href: `#/notifications?cursor=${encodeURIComponent(page.nextCursor)}` }, 'Older →') : null,
    ),
  );
}
