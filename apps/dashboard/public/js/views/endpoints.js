// Endpoints list: where each endpoint stands at a glance; paused and disabled ones stand out. Each
// row shows the last 24 hours (success rate and a sparkline). Customer mode shows the state in
// words instead of policy names and failure streaks.
import { badge, h, num, table } from '../dom.js';
import { time, when } from '../format.js';
import { sparkline } from '../sparkline.js';

/** The last 24 h of an endpoint's summary: `97% of 120` and the hourly bars. */
function last24h(summary) {
  if (!summary) return '—';
  const { attempts, successRate, hourly } = summary.last24h;
  const words = successRate === null ? 'no attempts' : `${Math.floor(successRate * 1000) / 10}% of ${attempts}`;
  return h('span', { class: 'last24h' }, sparkline(hourly, `Last 24 hours: ${words}`), h('span', { class: 'rate' }, words));
}

/** `#/endpoints[?cursor=]` */
export async function endpointsView(ctx) {
  const cursor = ctx.query.get('cursor');
  const page = await ctx.api.get(`/v1/endpoints?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  // One summary per endpoint (a page holds at most 50); a failing one leaves its cell empty.
  const summaries = await Promise.all(page.data.map((e) => ctx.api.get(`/v1/endpoints/${encodeURIComponent(e.id)}/summary`).catch(() => null)));
  const rows = page.data.map((e, i) => {
    const summary = summaries[i];
    const link = h('a', { href: `#/endpoints/${encodeURIComponent(e.id)}` }, e.url);
    if (ctx.customer) {
      return {
        className: e.status === 'disabled' ? 'row--disabled' : e.status === 'paused' ? 'row--inactive' : undefined,
        cells: [
          [link, e.description ? h('span', { class: 'sub' }, e.description) : null],
          [badge(e.status, summary?.state.headline ?? e.status), summary?.state.waiting ? h('span', { class: 'sub' }, `${summary.state.waiting} waiting`) : null],
          h('span', { class: 'types' }, e.eventTypes.join(', ')),
          last24h(summary),
          when(e.lastSuccessAt),
        ],
      };
    }
    return {
      className: e.status === 'disabled' ? 'row--disabled' : e.status === 'paused' ? 'row--inactive' : undefined,
      cells: [
        [link, e.description ? h('span', { class: 'sub' }, e.description) : null],
        [badge(e.status), e.status !== 'active' && e.disabledReason ? h('span', { class: 'sub' }, e.disabledReason) : null],
        h('span', { class: 'types' }, e.eventTypes.join(', ')),
        e.policyName ?? 'custom',
        // Every failed attempt counts here; the breaker's own streak is shown beside it when it differs.
        num(e.consecutiveFailures === e.consecutiveFailedAttempts ? String(e.consecutiveFailedAttempts) : `${e.consecutiveFailedAttempts} (breaker: ${e.consecutiveFailures})`),
        last24h(summary),
        time(e.lastSuccessAt),
        time(e.lastFailureAt),
      ],
    };
  });
  const columns = ctx.customer ? ['URL', 'Status', 'Event types', 'Last 24 hours', 'Last success'] : ['URL', 'Status', 'Event types', 'Policy', 'Failing attempts in a row', 'Last 24 hours', 'Last success', 'Last failure'];
  return h(
    'section',
    null,
    h('div', { class: 'page-head' }, h('h1', null, 'Endpoints'), ctx.canWrite ? h('a', { class: 'button primary', href: '#/endpoints/new', id: 'new-endpoint' }, '+ New endpoint') : null),
    h('p', { class: 'subtitle' }, ctx.customer ? 'Where your webhooks are sent. Open one to see its deliveries.' : 'Every URL your organisation delivers webhooks to. Open one for its delivery log and actions.'),
    rows.length === 0
      ? h('p', { class: 'empty card' }, cursor ? 'No more endpoints.' : ctx.canWrite ? 'No endpoints yet. Create one with “New endpoint”.' : 'No endpoints yet.')
      : table('Endpoints', columns, rows, 'endpoints-table'),
    h(
      'div',
      { class: 'pager' },
      cursor ? h('a', { class: 'button', href: '#/endpoints' }, '← First page') : null,
      page.nextCursor ? h('a', { class: 'button', href: `#/endpoints?cursor=${encodeURIComponent(page.nextCursor)}` }, 'More endpoints →') : null,
    ),
  );
}
