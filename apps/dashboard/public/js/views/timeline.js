// The policy timeline of one endpoint: when each attempt starts if every attempt fails.
import { h, num, table } from '../dom.js';
import { duration } from '../format.js';
import { timelineChart } from '../timeline-chart.js';

/** `#/endpoints/:id/timeline` — computed by the API from the endpoint's own policy. */
export async function timelineView(ctx) {
  const [id] = ctx.params;
  const [endpoint, timeline] = await Promise.all([ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}`), ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}/timeline`)]);
  // Drawn at the width it will be shown at, so its 12 px labels stay 12 px on a phone.
  const main = document.getElementById('main');
  const mainPadding = main ? parseFloat(getComputedStyle(main).paddingLeft) * 2 : 0;
  const width = Math.min(1100, (main?.clientWidth ?? 800) - mainPadding - 44);
  const policy = endpoint.policy;
  const rows = timeline.attempts.map((a) => ({
    cells: [num(`#${a.attempt}`), num(a.attempt === 1 ? 'at once' : duration(a.earliestMs)), num(a.attempt === 1 ? 'at once' : duration(a.latestMs))],
  }));
  return h(
    'section',
    null,
    h(
      'nav',
      { class: 'crumbs', 'aria-label': 'Breadcrumb' },
      h('a', { href: '#/endpoints' }, 'Endpoints'),
      ' › ',
      h('a', { href: `#/endpoints/${encodeURIComponent(endpoint.id)}` }, endpoint.url),
      ' › ',
      h('span', { 'aria-current': 'page' }, 'Policy timeline'),
    ),
    h('h1', null, 'Policy timeline'),
    h(
      'p',
      { class: 'subtitle' },
      `Policy ${timeline.policyName ?? 'custom'}: ${policy.maxAttempts} attempts, ${policy.schedule.kind} waits` +
        `${policy.jitterRatio ? ` with ±${Math.round(policy.jitterRatio * 100)} % jitter` : ''}, timeout ${duration(policy.timeout.ms)}. ` +
        'When each attempt starts, after the first, for a delivery that fails every time.',
    ),
    timelineChart(timeline.attempts, width),
    h('h2', null, 'Attempt times'),
    table('Attempt start times after the first attempt', ['Attempt', 'Earliest start', 'Latest start'], rows),
  );
}
