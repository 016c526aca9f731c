// Failed deliveries across every endpoint: one list of what failed or is being retried, filtered by
// status, with "Retry these" for the ones picked. Retrying uses the API's own paths — redeliver for
// a failed delivery, send-now for one waiting for its next attempt — each with an Idempotency-Key
// made from the delivery id, so a second click (or a reload and a click) sends nothing twice.
import { actionButton } from '../actions.js';
import { badge, h, num, table } from '../dom.js';
import { shortId, time, when } from '../format.js';

const FILTERS = { failing: 'Failed or retrying', failed: 'Failed', retrying: 'Retrying' };

/**
 * The deliveries picked on this page visit, by id. The page re-renders after an action (and a user
 * may pick while it does), so the picks live here rather than in the checkboxes of one render.
 */
const picks = { visit: -1, ids: new Set() };

/** Up to 25 of each endpoint's failed and retrying deliveries, newest first, at most 200 in all. */
async function failingDeliveries(ctx, endpoints, filter) {
  const lists = await Promise.all(
    endpoints.flatMap((e) => [
      filter !== 'retrying' ? ctx.api.get(`/v1/endpoints/${encodeURIComponent(e.id)}/deliveries?status=failed&limit=25`).then((r) => r.data) : [],
      filter !== 'failed' ? ctx.api.get(`/v1/endpoints/${encodeURIComponent(e.id)}/deliveries?status=pending&limit=25`).then((r) => r.data.filter((d) => d.attemptCount > 0)) : [],
    ]),
  );
  return lists
    .flat()
    .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
    .slice(0, 200);
}

/** Retries one delivery the way its status allows; resolves with what happened, never rejects. */
async function retryOne(ctx, d) {
  const headers = { 'idempotency-key': `portal-retry-${d.id}` };
  try {
    const r = d.status === 'failed' ? await ctx.api.post(`/v1/deliveries/${encodeURIComponent(d.id)}/redeliver`, undefined, headers) : await ctx.api.post(`/v1/deliveries/${encodeURIComponent(d.id)}/send-now`, undefined, headers);
    return r.replayed ? 'already' : 'sent';
  } catch (err) {
    return err.code ?? 'error';
  }
}

/** `#/failed[?status=failing|failed|retrying]` */
export async function failedView(ctx) {
  const filter = FILTERS[ctx.query.get('status')] ? ctx.query.get('status') : 'failing';
  const endpoints = (await ctx.api.get('/v1/endpoints?limit=50')).data;
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  const deliveries = await failingDeliveries(ctx, endpoints, filter);
  if (picks.visit !== ctx.visit) {
    picks.visit = ctx.visit;
    picks.ids.clear();
  }
  const boxes = [];
  const rows = deliveries.map((d) => {
    const box = h('input', {
      type: 'checkbox',
      class: 'pick',
      value: d.id,
      checked: picks.ids.has(d.id),
      'aria-label': `Pick ${shortId(d.id)}`,
      onchange: () => {
        if (box.checked) picks.ids.add(d.id);
        else picks.ids.delete(d.id);
        all.checked = boxes.every(({ box: b }) => b.checked);
      },
    });
    boxes.push({ box, d });
    return {
      cells: [
        ctx.canWrite ? box : null,
        [h('a', { href: `#/deliveries/${encodeURIComponent(d.id)}`, class: 'mono' }, shortId(d.id)), h('span', { class: 'sub' }, d.eventType)],
        h('a', { href: `#/endpoints/${encodeURIComponent(d.endpointId)}` }, byId.get(d.endpointId)?.url ?? d.endpointId),
        d.status === 'failed' ? badge('failed') : badge('pending', 'retrying'),
        num(d.attemptCount),
        d.lastError ? h('code', null, d.lastError) : '—',
        ctx.customer ? when(d.createdAt) : time(d.createdAt),
      ],
    };
  });
  const select = h(
    'select',
    { id: 'failed-filter', name: 'status', onchange: () => ctx.navigate(`#/failed?status=${select.value}`) },
    Object.entries(FILTERS).map(([value, label]) => h('option', { value, selected: value === filter }, label)),
  );
  const all = h('input', {
    type: 'checkbox',
    id: 'pick-all',
    checked: boxes.length > 0 && boxes.every(({ box }) => box.checked),
    onchange: () => {
      for (const { box, d } of boxes) {
        box.checked = all.checked;
        if (all.checked) picks.ids.add(d.id);
        else picks.ids.delete(d.id);
      }
    },
  });
  const retry = actionButton(ctx, {
    id: 'retry-these',
    label: '↻ Retry these',
    className: 'primary',
    run: async () => {
      const picked = boxes.filter(({ box }) => box.checked).map(({ d }) => d);
      if (picked.length === 0) return null;
      return Promise.all(picked.map((d) => retryOne(ctx, d)));
    },
    done: (outcomes) => {
      if (!outcomes) return ctx.notify('Pick the deliveries to retry first.', 'warn');
      picks.ids.clear();
      const count = (what) => outcomes.filter((o) => o === what).length;
      const others = outcomes.length - count('sent') - count('already');
      ctx.notify(`${count('sent')} sent again${count('already') ? `; ${count('already')} had been sent again already` : ''}${others ? `; ${others} could not be retried (the endpoint is inactive, or its policy does not allow it)` : ''}.`, others ? 'warn' : 'ok');
      return ctx.reload();
    },
  });
  return h(
    'section',
    null,
    h('h1', null, 'Failed deliveries'),
    h('p', { class: 'subtitle' }, 'Deliveries that failed or are being retried, across every endpoint, newest first.'),
    h('div', { class: 'toolbar' }, h('div', { class: 'field' }, h('label', { for: 'failed-filter' }, 'Show'), select), ctx.canWrite && rows.length > 0 ? [h('label', { class: 'checkbox' }, all, 'Pick all'), retry] : null),
    rows.length === 0
      ? h('p', { class: 'empty card', id: 'no-failed' }, 'Nothing failed. Every delivery went through or is on its way.')
      : table('Failed deliveries, newest first', [ctx.canWrite ? 'Pick' : '', 'Delivery', 'Endpoint', 'Status', 'Attempts', 'Last error', 'Created'], rows, 'failed-table log-table'),
  );
}
