// Audit log: who changed what through the API in the org, newest first, kept 90 days.
import { h, table } from '../dom.js';
import { time } from '../format.js';

const ACTOR_KINDS = { api_key: 'API key', platform_key: 'platform key', portal_session: 'portal session', admin: 'admin' };

/** The target as a link where the console has a page for it. */
function target(t) {
  if (t.type === 'endpoint') return h('a', { href: `#/endpoints/${encodeURIComponent(t.id)}` }, t.id);
  if (t.type === 'delivery') return h('a', { href: `#/deliveries/${encodeURIComponent(t.id)}` }, t.id);
  if (t.type === 'event') return h('a', { href: `#/events/${encodeURIComponent(t.id)}` }, t.id);
  return `${t.type} ${t.id}`;
}

/** `#/audit-log[?action=&target=&cursor=]` */
export async function auditLogView(ctx) {
  const params = new URLSearchParams();
  params.set('limit', '50');
  for (const name of ['action', 'target', 'cursor']) {
    const value = ctx.query.get(name);
    if (value) params.set(name, value);
  }
  const page = await ctx.api.get(`/v1/audit-log?${params}`);
  const rows = page.data.map((e) => ({
    cells: [time(e.at), e.action, target(e.target), `${ACTOR_KINDS[e.actor.kind] ?? e.actor.kind}: ${e.actor.name || e.actor.id}`, e.changes.length > 0 ? e.changes.join(', ') : '—', h('code', null, e.requestId)],
  }));
  const filters = h(
    'form',
    { class: 'toolbar', role: 'search', 'aria-label': 'Filter the audit log' },
    h('label', { class: 'field' }, 'Action ', h('input', { name: 'action', value: ctx.query.get('action') ?? '', placeholder: 'endpoint.updated' })),
    h('label', { class: 'field' }, 'Target id ', h('input', { name: 'target', value: ctx.query.get('target') ?? '', placeholder: 'ep_…' })),
    h('button', { type: 'submit' }, 'Filter'),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    const q = new URLSearchParams();
    for (const name of ['action', 'target']) {
      const value = filters.elements[name].value.trim();
      if (value) q.set(name, value);
    }
    location.hash = `#/audit-log${q.size > 0 ? `?${q}` : ''}`;
  });
  const base = new URLSearchParams();
  for (const name of ['action', 'target']) if (ctx.query.get(name)) base.set(name, ctx.query.get(name));
  const older = page.nextCursor ? new URLSearchParams([...base, ['cursor', page.nextCursor]]) : null;
  return h(
    'section',
    null,
    h('h1', null, 'Audit log'),
    h('p', { class: 'subtitle' }, 'Every change made through the API — who, what, which fields (never their values) — newest first, kept 90 days.'),
    filters,
    rows.length === 0
      ? h('p', { class: 'empty card' }, 'No entries match.')
      : table('Audit log', ['When', 'Action', 'Target', 'By', 'Fields changed', 'Request'], rows),
    h(
      'div',
      { class: 'pager' },
      ctx.query.get('cursor') ? h('a', { class: 'button', href: `#/audit-log${base.size > 0 ? `?${base}` : ''}` }, '← Newest') : null,
      older ? h('a', { class: 'button', href: `#/audit-log?${older}` }, 'Older →') : null,
    ),
  );
}
