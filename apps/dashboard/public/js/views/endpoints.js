// Endpoints list: where each endpoint stands at a glance; paused and disabled ones stand out.
import { badge, h, num, table } from '../dom.js';
import { time } from '../format.js';

/** `#/endpoints[?cursor=]` */
export async function endpointsView(ctx) {
  const cursor = ctx.query.get('cursor');
  const page = await ctx.api.get(`/v1/endpoints?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  const rows = page.data.map((e) => ({
    className: e.status === 'disabled' ? 'row--disabled' : e.status === 'paused' ? 'row--inactive' : undefined,
    cells: [
      [h('a', { href: `#/endpoints/${encodeURIComponent(e.id)}` }, e.url), e.description ? h('span', { class: 'sub' }, e.description) : null],
      [badge(e.status), e.status !== 'active' && e.disabledReason ? h('span', { class: 'sub' }, e.disabledReason) : null],
      h('span', { class: 'types' }, e.eventTypes.join(', ')),
      e.policyName ?? 'custom',
      // Every failed attempt counts here; the breaker's own streak is shown beside it when it differs.
      num(e.consecutiveFailures === e.consecutiveFailedAttempts ? String(e.consecutiveFailedAttempts) : `${e.consecutiveFailedAttempts} (breaker: ${e.consecutiveFailures})`),
      time(e.lastSuccessAt),
      time(e.lastFailureAt),
    ],
  }));
  return h(
    'section',
    null,
    h('div', { class: 'page-head' }, h('h1', null, 'Endpoints'), ctx.canWrite ? h('a', { class: 'button primary', href: '#/endpoints/new', id: 'new-endpoint' }, '+ New endpoint') : null),
    h('p', { class: 'subtitle' }, 'Every URL your organisation delivers webhooks to. Open one for its delivery log and actions.'),
    rows.length === 0
      ? h('p', { class: 'empty card' }, cursor ? 'No more endpoints.' : ctx.canWrite ? 'No endpoints yet. Create one with “New endpoint”.' : 'No endpoints yet.')
      : table('Endpoints', ['URL', 'Status', 'Event types', 'Policy', 'Failing attempts in a row', 'Last success', 'Last failure'], rows, 'endpoints-table'),
    h(
      'div',
      { class: 'pager' },
      cursor ? h('a', { class: 'button', href: '#/endpoints' }, '← First page') : null,
      page.nextCursor ? h('a', { class: 'button', href: `#/endpoints?cursor=${encodeURIComponent(page.nextCursor)}` }, 'More endpoints →') : null,
    ),
  );
}
