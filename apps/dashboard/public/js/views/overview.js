// Overview: success rate, volume and error codes over the last hour or day, for the org or one
// endpoint, from the counters Postern keeps as attempts finish (GET /v1/stats).
import { h, num, table } from '../dom.js';
import { statsChart } from '../stats-chart.js';

function overviewHash(endpointId, window) {
  const q = new URLSearchParams();
  if (endpointId) q.set('endpointId', endpointId);
  if (window !== 'hour') q.set('window', window);
  const search = q.toString();
  return `#/overview${search ? `?${search}` : ''}`;
}

// How long after an attempt finishes its counters are surely written (the senders write them
// about once a second), ms.
const COUNTERS_LAG_MS = 1500;
// The reload scheduled to read the counters again, if one is pending ({timer, visit}): a burst of
// changes reads them once.
let countersReload = null;
// The page visit (ctx.visit) whose counters were read again after it opened.
let countersReadAgainOnVisit = null;

function percent(rate) {
  return rate === null ? '—' : `${(Math.floor(rate * 1000) / 10).toFixed(1)} %`;
}

/** `#/overview[?endpointId=&window=hour|day]` */
export async function overviewView(ctx) {
  const endpointId = ctx.query.get('endpointId') ?? '';
  const window = ctx.query.get('window') === 'day' ? 'day' : 'hour';
  const q = new URLSearchParams({ window });
  if (endpointId) q.set('endpointId', endpointId);
  const [stats, endpoints] = await Promise.all([ctx.api.get(`/v1/stats?${q}`), ctx.api.get('/v1/endpoints?limit=100')]);
  // The counters move as attempts finish: follow them while the page is open (polling every 3 s if
  // the stream fails). The senders write them about once a second, so a change seen on the live
  // stream is read again a little after that, once for a burst of changes.
  // Attempts that finished just before the page opened are read the same way, once per visit.
  const readCountersAgain = () => {
    if (countersReload?.visit === ctx.visit) return;
    if (countersReload) clearTimeout(countersReload.timer);
    const timer = setTimeout(() => {
      countersReload = null;
      void ctx.reload();
    }, COUNTERS_LAG_MS);
    countersReload = { timer, visit: ctx.visit };
  };
  if (countersReadAgainOnVisit !== ctx.visit) {
    countersReadAgainOnVisit = ctx.visit;
    readCountersAgain();
  }
  ctx.live(endpointId ? { endpointId } : {}, {
    fallbackMs: 3000,
    onChange: () => {
      readCountersAgain();
      return false;
    },
  });

  const scope = h('select', { id: 'overview-scope', name: 'endpointId', onchange: () => ctx.navigate(overviewHash(scope.value, window)) }, h('option', { value: '' }, 'Whole organisation'), endpoints.data.map((e) => h('option', { value: e.id, selected: e.id === endpointId }, e.url)));
  const windowSelect = h('select', { id: 'overview-window', name: 'window', onchange: () => ctx.navigate(overviewHash(endpointId, windowSelect.value)) }, h('option', { value: 'hour', selected: window === 'hour' }, 'Last hour'), h('option', { value: 'day', selected: window === 'day' }, 'Last 24 hours'));

  const main = document.getElementById('main');
  const padding = main ? parseFloat(getComputedStyle(main).paddingLeft) * 2 : 0;
  const width = Math.min(1100, (main?.clientWidth ?? 800) - padding - 36);
  const { totals } = stats;
  return h(
    'section',
    null,
    h('div', { class: 'page-head' }, h('h1', null, 'Overview')),
    h('p', { class: 'subtitle' }, 'Attempts as they finished: how many, how many succeeded, and why the others failed. Updates every few seconds.'),
    h('form', { class: 'toolbar', onsubmit: (e) => e.preventDefault() }, h('div', { class: 'field' }, h('label', { for: 'overview-scope' }, 'Show'), scope), h('div', { class: 'field' }, h('label', { for: 'overview-window' }, 'Period'), windowSelect)),
    h(
      'div',
      { class: 'tiles' },
      h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, 'Success rate'), h('strong', { id: 'success-rate' }, percent(totals.successRate))),
      h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, 'Attempts'), h('strong', { id: 'attempt-total' }, String(totals.attempts))),
      h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, 'Succeeded'), h('strong', null, String(totals.succeeded))),
      h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, 'Failed'), h('strong', { id: 'failed-total' }, String(totals.failed))),
    ),
    h('h2', null, 'Volume'),
    h('div', { class: 'card' }, statsChart(stats, width, 'volume'), h('p', { class: 'legend' }, h('span', { class: 'key key-ok' }), 'succeeded ', h('span', { class: 'key key-fail' }), 'failed')),
    h('h2', null, 'Error codes'),
    stats.errors.length === 0
      ? h('p', { class: 'empty card', id: 'no-errors' }, 'No failed attempts in this period.')
      : table('Failed attempts by error code', ['Error code', 'Attempts', 'Share of failures'], stats.errors.map((e) => ({ cells: [h('code', null, e.code), num(e.count), num(percent(e.count / totals.failed))] })), 'errors-table'),
  );
}
