// One endpoint: its health, its actions, and its delivery log (newest first, filter, paging).
import { actionButton } from '../actions.js';
import { badge, facts, h, num, table } from '../dom.js';
import { duration, relative, shortId, time, when } from '../format.js';
import { sparkline } from '../sparkline.js';
import { requestSettingsFacts } from './request-settings-facts.js';

const STATUSES = ['pending', 'in_flight', 'succeeded', 'failed', 'cancelled'];

// A rotated secret is shown once, on the visit of the page that rotated it.
let revealed = null;

function logHash(id, status, cursor) {
  const q = new URLSearchParams();
  if (status) q.set('status', status);
  if (cursor) q.set('cursor', cursor);
  const search = q.toString();
  return `#/endpoints/${encodeURIComponent(id)}${search ? `?${search}` : ''}`;
}

function deliveryRow(d, customer) {
  return {
    cells: [
      [
        h('a', { href: `#/deliveries/${encodeURIComponent(d.id)}`, id: `dlv-${d.id}`, class: 'mono' }, shortId(d.id)),
        h('span', { class: 'sub' }, d.eventType, d.redeliveredFromId ? h('span', { class: 'tag' }, '↻ redelivery') : null, d.isTest ? h('span', { class: 'tag' }, 'test') : null),
      ],
      [badge(d.status), d.held ? h('span', { class: 'tag' }, 'held') : null],
      num(d.attemptCount),
      d.nextAttemptAt ? [time(d.nextAttemptAt), h('span', { class: 'sub' }, relative(d.nextAttemptAt))] : '—',
      d.lastError ? h('code', null, d.lastError) : d.cancelReason ? h('code', { class: 'cancel-reason' }, d.cancelReason) : '—',
      num(d.lastResponseStatus),
      num(d.lastDurationMs === null ? null : duration(d.lastDurationMs)),
      customer ? when(d.createdAt) : time(d.createdAt),
    ],
  };
}

/**
 * Re-creating an endpoint whose policy does not let it be resumed after its breaker disabled it: a
 * new endpoint with the same URL, event types, description and policy (and a new secret), then
 * the old one deleted.
 */
function recreateButton(ctx, endpoint) {
  return actionButton(ctx, {
    id: 'recreate',
    focusKey: 'pause-resume',
    label: '↻ Re-create',
    className: 'primary',
    confirmText: 'Re-create this endpoint? A new endpoint with the same URL and event types gets a new signing secret; this one and its queued deliveries are removed.',
    run: async () => {
      const created = await ctx.api.post('/v1/endpoints', { url: endpoint.url, eventTypes: endpoint.eventTypes, description: endpoint.description ?? '', policy: endpoint.policyName ?? endpoint.policy });
      await ctx.api.del(`/v1/endpoints/${encodeURIComponent(endpoint.id)}`);
      return created;
    },
    done: (created) => ctx.navigate(`#/endpoints/${encodeURIComponent(created.id)}`, ['Endpoint re-created with a new signing secret: reveal it below and update your receiver.', 'ok']),
  });
}

/** "Send example": one of the catalog's examples of a type this endpoint receives, as a test event. */
function sendExample(ctx, endpoint, catalog) {
  const subscribed = catalog.filter((t) => t.examples.length > 0 && (endpoint.eventTypes.includes('*') || endpoint.eventTypes.includes(t.name)));
  if (subscribed.length === 0) return null;
  const select = h('select', { id: 'example-type', name: 'exampleType' }, subscribed.map((t) => h('option', { value: t.name }, t.name)));
  return h(
    'div',
    { class: 'send-example' },
    h('label', { for: 'example-type' }, 'Example of'),
    select,
    actionButton(ctx, {
      id: 'send-example',
      label: 'Send example',
      run: () => ctx.api.post(`/v1/endpoints/${encodeURIComponent(endpoint.id)}/send-example`, { eventType: select.value }),
      done: (r) => {
        const delivery = r.deliveries[0];
        ctx.notify(`Example of ${select.value} sent.`, 'ok', delivery ? { href: `#/deliveries/${encodeURIComponent(delivery.id)}`, text: 'Follow its delivery' } : null);
        return ctx.reload();
      },
    }),
  );
}

function actions(ctx, endpoint, redeliverable, summary, catalog) {
  const id = encodeURIComponent(endpoint.id);
  const paused = endpoint.status !== 'active';
  const reload = () => ctx.reload();
  // Only what the API accepts in this state (GET …/summary): a disabled endpoint whose policy
  // re-enables only by re-creating offers Re-create, never Resume.
  const offered = summary?.state.actions ?? (paused ? ['resume'] : ['pause', 'send_test']);
  return h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'Endpoint actions' },
    h('a', { class: 'button', href: `#/endpoints/${id}/edit`, id: 'edit-endpoint' }, 'Edit'),
    offered.includes('recreate')
      ? recreateButton(ctx, endpoint)
      : paused
      ? actionButton(ctx, {
          id: 'resume',
          focusKey: 'pause-resume',
          label: '▶ Resume',
          className: 'primary',
          run: () => ctx.api.post(`/v1/endpoints/${id}/resume`),
          done: (r) => {
            ctx.notify(r.requeued ? `Endpoint resumed; ${r.requeued} held deliveries are on their way again.` : 'Endpoint resumed: new deliveries are attempted again.');
            return reload();
          },
        })
      : actionButton(ctx, {
          id: 'pause',
          focusKey: 'pause-resume',
          label: '‖ Pause',
          run: () => ctx.api.post(`/v1/endpoints/${id}/pause`),
          done: () => {
            ctx.notify('Endpoint paused: no attempts are made until you resume it; its policy decides what happens to queued deliveries.');
            return reload();
          },
        }),
    // Only what the API would accept: a test event needs an active endpoint.
    !offered.includes('send_test')
      ? null
      : actionButton(ctx, {
          id: 'send-test',
          label: 'Send test event',
          run: () => ctx.api.post(`/v1/endpoints/${id}/test`),
          done: (r) => {
            const delivery = r.deliveries[0];
            ctx.notify(`Test event sent (${r.id}).`, 'ok', delivery ? { href: `#/deliveries/${encodeURIComponent(delivery.id)}`, text: 'Follow its delivery' } : null);
            return reload();
          },
        }),
    offered.includes('send_test') ? sendExample(ctx, endpoint, catalog) : null,
    actionButton(ctx, {
      id: 'reveal-secret',
      label: 'Reveal secret',
      run: () => ctx.api.get(`/v1/endpoints/${id}/secret`),
      done: (r) => {
        revealed = { endpointId: endpoint.id, visit: ctx.visit, secret: r.secret, publicKey: r.publicKey, until: null };
        return reload();
      },
    }),
    actionButton(ctx, {
      id: 'rotate-secret',
      label: 'Rotate secret',
      confirmText: 'Rotate the signing secret? Requests carry a signature with the old secret too until the grace period ends; update your receiver before then.',
      run: () => ctx.api.post(`/v1/endpoints/${id}/rotate-secret`),
      done: (r) => {
        revealed = { endpointId: endpoint.id, visit: ctx.visit, secret: r.secret, publicKey: r.publicKey, until: r.previousSecretValidUntil };
        ctx.notify('New secret issued and shown below. “Reveal secret” shows it again whenever you need it.');
        return reload();
      },
    }),
    // Switching scheme is a rotation into the other scheme: both sign during the grace period.
    actionButton(ctx, {
      id: 'switch-scheme',
      label: endpoint.signatureScheme === 'ed25519' ? 'Switch to HMAC-SHA256' : 'Switch to Ed25519',
      confirmText: `Rotate to a new ${endpoint.signatureScheme === 'ed25519' ? 'HMAC-SHA256 secret' : 'Ed25519 key'}? Requests carry the old signature too until the grace period ends; update your receiver before then.`,
      run: () => ctx.api.post(`/v1/endpoints/${id}/rotate-secret`, { signatureScheme: endpoint.signatureScheme === 'ed25519' ? 'hmac-sha256' : 'ed25519' }),
      done: (r) => {
        revealed = { endpointId: endpoint.id, visit: ctx.visit, secret: r.secret, publicKey: r.publicKey, until: r.previousSecretValidUntil };
        ctx.notify(`Signatures switched to ${r.signatureScheme}; the new key is shown below.`);
        return reload();
      },
    }),
    redeliverable
      ? actionButton(ctx, {
          id: 'redeliver-failed',
          label: '↻ Redeliver all failed',
          confirmText: 'Send every failed delivery of this endpoint again (at most 500 per click)?',
          run: () => ctx.api.post(`/v1/endpoints/${id}/redeliver-failed`),
          done: (r) => {
            ctx.notify(r.count === 0 ? 'There were no failed deliveries to send again.' : `${r.count} failed ${r.count === 1 ? 'delivery is' : 'deliveries are'} being sent again${r.remaining ? `; ${r.remaining} more remain, click again for them` : ''}.`);
            return reload();
          },
        })
      : null,
  );
}

function secretBox(endpoint, ctx) {
  if (!revealed || revealed.endpointId !== endpoint.id || revealed.visit !== ctx.visit) return null;
  const code = h('code', { id: 'secret-value' }, revealed.secret);
  const copy = h(
    'button',
    {
      type: 'button',
      id: 'copy-secret',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(revealed.secret);
          copy.textContent = 'Copied ✓';
        } catch {
          // No clipboard access (an insecure origin): select the text for Ctrl+C instead.
          getSelection()?.selectAllChildren(code);
          copy.textContent = 'Selected: press Ctrl+C';
        }
      },
    },
    'Copy',
  );
  return h(
    'div',
    { class: 'secret-box', id: revealed.until ? 'new-secret' : 'shown-secret' },
    h('strong', null, `${revealed.until ? 'New signing' : 'Signing'} ${revealed.publicKey ? 'secret key (Ed25519, stays with Postern; receivers need only the public key)' : 'secret'}:`),
    h('div', { class: 'secret-line' }, code, copy),
    revealed.until ? h('span', null, 'The old secret keeps signing too until ', time(revealed.until), '.') : h('span', null, 'Keep it out of logs and source control.'),
  );
}

/** What the endpoint's breaker counts, in words, or null when it has none. */
function breakerCounts(policy) {
  const rule = policy.breaker;
  if (!rule) return null;
  if (rule.counts === 'deliveries') return 'failed deliveries';
  return rule.of === '4xx' ? '4xx answers only' : 'failed attempts';
}

/** `#/endpoints/:id[?status=&cursor=]` */
export async function endpointView(ctx) {
  const [id] = ctx.params;
  const status = STATUSES.includes(ctx.query.get('status')) ? ctx.query.get('status') : '';
  const cursor = ctx.query.get('cursor') ?? '';
  const q = new URLSearchParams({ limit: '25' });
  if (status) q.set('status', status);
  if (cursor) q.set('cursor', cursor);
  const [endpoint, log, summary, catalog] = await Promise.all([
    ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}`),
    ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}/deliveries?${q}`),
    ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}/summary`),
    ctx.api.get('/v1/event-types').then((r) => r.data),
  ]);

  // Held deliveries wait for a resume, not for time: they need no polling.
  const inProgress = log.data.some((d) => (d.status === 'pending' && !d.held) || d.status === 'in_flight');
  let redeliverable = false;
  if (ctx.canWrite && endpoint.status === 'active' && endpoint.policy.redelivery.allowed) {
    const [failed, cancelled] = await Promise.all([
      ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}/deliveries?status=failed&limit=1`),
      ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}/deliveries?status=cancelled&limit=1`),
    ]);
    redeliverable = failed.data.length > 0 || cancelled.data.some((d) => d.cancelReason === 'breaker_tripped');
  }
  // Follow progress without a click, but only on the first page, where new rows appear: live from
  // the stream (new deliveries too), polling (every 2 s while some are in progress, else 5 s) if it fails.
  if (!cursor) ctx.live({ endpointId: endpoint.id }, { fallbackMs: inProgress ? 2000 : 5000 });

  const select = h(
    'select',
    { id: 'status-filter', name: 'status', onchange: () => ctx.navigate(logHash(endpoint.id, select.value, '')) },
    h('option', { value: '' }, 'All statuses'),
    STATUSES.map((s) => h('option', { value: s, selected: s === status }, s.replace('_', ' '))),
  );
  const filter = h(
    'form',
    {
      class: 'toolbar',
      onsubmit: (e) => {
        e.preventDefault();
        ctx.navigate(logHash(endpoint.id, select.value, ''));
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'status-filter' }, 'Status'), select),
    h('button', { type: 'button', id: 'refresh', onclick: () => ctx.reload() }, 'Refresh'),
  );

  const inactive = endpoint.status !== 'active';
  return h(
    'section',
    null,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/endpoints' }, 'Endpoints'), ' › ', h('span', { 'aria-current': 'page' }, 'Endpoint')),
    h('div', { class: 'page-head' }, h('h1', null, endpoint.url), badge(endpoint.status)),
    h('p', { class: 'subtitle' }, ctx.customer ? endpoint.description || null : [h('code', null, endpoint.id), endpoint.description ? ` · ${endpoint.description}` : '']),
    inactive ? stateBanner(endpoint, summary, ctx.customer) : null,
    ctx.customer ? customerHealth(endpoint, summary) : operatorHealth(endpoint, summary),
    ctx.canWrite
      ? [h('h2', null, 'Actions'), actions(ctx, endpoint, redeliverable, summary, catalog), secretBox(endpoint, ctx)]
      : h('p', { class: 'hint', id: 'read-only-hint' }, 'This API key is read-only (it lacks the webhooks:write scope), so editing, pausing, testing, revealing or rotating the secret and redelivering are not offered.'),
    h('h2', { id: 'log-heading' }, 'Delivery log'),
    filter,
    !cursor ? h('p', { class: 'hint', 'data-testid': 'live-hint' }, 'This log follows new attempts as they finish.') : null,
    log.data.length === 0
      ? h('p', { class: 'empty card' }, status ? `No ${status.replace('_', ' ')} deliveries${cursor ? ' on this page' : ''}.` : 'No deliveries yet.')
      : table('Delivery log, newest first', ['Delivery', 'Status', 'Attempts', 'Next attempt', 'Last error', 'Response', 'Duration', 'Created'], log.data.map((d) => deliveryRow(d, ctx.customer)), 'log-table'),
    h(
      'div',
      { class: 'pager' },
      cursor ? h('a', { class: 'button', href: logHash(endpoint.id, status, '') }, '← Newest') : null,
      log.nextCursor ? h('a', { class: 'button', id: 'older', href: logHash(endpoint.id, status, log.nextCursor) }, 'Older deliveries →') : null,
    ),
  );
}

/** The adaptive pace as a sentence: what the sender allows the endpoint now, next to the policy's limits. */
function paceText(endpoint) {
  const { pace, policy } = endpoint;
  const rate = pace.perSecond === null ? 'no rate bound' : `${pace.perSecond}/s${policy.rateLimit ? ` of ${policy.rateLimit.perSecond}/s` : ''}`;
  return `${rate}, ${pace.concurrency} of ${policy.concurrency.perEndpoint} at once`;
}

/**
 * Why an inactive endpoint receives nothing, since when, how many deliveries wait for it and what
 * happens to new ones — from the summary, in words. Operators also see the breaker's own reason.
 */
function stateBanner(endpoint, summary, customer) {
  const state = summary.state;
  return h(
    'div',
    { class: `notice notice--${state.tone === 'warn' ? 'warn' : 'error'}`, id: 'inactive-banner', role: 'status' },
    h(
      'p',
      null,
      h('strong', null, state.headline),
      state.since ? [' since ', when(state.since)] : null,
      state.waiting ? `; ${state.waiting} ${state.waiting === 1 ? 'delivery is' : 'deliveries are'} waiting` : '',
      '. ',
      state.meanwhile ?? '',
      !customer && endpoint.disabledReason ? h('span', { class: 'sub' }, ` (${endpoint.disabledReason})`) : null,
    ),
  );
}

/** Customer mode's health: the state and policy in words, the last 24 h; no streaks, ids or JSON. */
function customerHealth(endpoint, summary) {
  const { attempts, successRate, hourly } = summary.last24h;
  const rate = successRate === null ? 'No attempts in the last 24 hours' : `${Math.floor(successRate * 1000) / 10}% of ${attempts} attempts succeeded in the last 24 hours`;
  return [
    h('h2', null, 'Health'),
    h(
      'div',
      { class: 'card', id: 'customer-health' },
      facts([
        ['Status', badge(endpoint.status, summary.state.headline)],
        ['Retries', summary.policyLabel],
        ['Last 24 hours', h('span', { class: 'last24h' }, sparkline(hourly, rate), h('span', { class: 'rate' }, rate))],
        ['Last success', when(endpoint.lastSuccessAt)],
        ['Last failure', when(endpoint.lastFailureAt)],
        ['Signatures', endpoint.signatureScheme === 'ed25519' ? 'Ed25519 (v1a)' : 'HMAC-SHA256 (v1)'],
        endpoint.publicKey ? ['Public key', h('code', { id: 'public-key', class: 'mono' }, endpoint.publicKey), true] : null,
        ['Event types', endpoint.eventTypes.join(', ')],
      ]),
    ),
    h('h2', null, 'Requests'),
    h('div', { class: 'card', id: 'request-settings' }, facts(requestSettingsFacts(endpoint))),
  ];
}

/** The operator's health facts and request settings, in full. */
function operatorHealth(endpoint, summary) {
  return [
    h('h2', null, 'Health'),
    h(
      'div',
      { class: 'card' },
      facts([
        ['Status', badge(endpoint.status)],
        ['Policy', [endpoint.policyName ?? 'custom', ' · ', h('a', { href: `#/endpoints/${encodeURIComponent(endpoint.id)}/timeline` }, 'timeline')]],
        ['Failed attempts in a row', h('span', { id: 'failed-in-a-row' }, String(endpoint.consecutiveFailedAttempts))],
        ['Failed attempts in all', h('span', { id: 'failed-in-all' }, String(endpoint.failedAttempts))],
        ['Last success', time(endpoint.lastSuccessAt)],
        ['Last failure', h('span', { id: 'last-failure' }, time(endpoint.lastFailureAt))],
        // The breaker's own streak, separately: it may count only some failures (e.g. 4xx answers).
        ['Breaker streak', breakerCounts(endpoint.policy) ? h('span', { id: 'breaker-streak' }, `${endpoint.consecutiveFailures} (counts ${breakerCounts(endpoint.policy)})`) : 'no breaker'],
        ['Breaker streak since', time(endpoint.failureStreakStartedAt)],
        endpoint.status === 'disabled' ? ['Disabled at', time(endpoint.disabledAt)] : null,
        ['Signatures', endpoint.signatureScheme === 'ed25519' ? 'Ed25519 (v1a)' : 'HMAC-SHA256 (v1)'],
        endpoint.publicKey ? ['Public key', h('code', { id: 'public-key', class: 'mono' }, endpoint.publicKey)] : null,
        ['Ordering', endpoint.policy.ordering === 'per-key' ? 'per ordering key, one at a time' : 'oldest first'],
        ['410 Gone', endpoint.policy.goneDisables ? 'disables the endpoint at once' : 'an ordinary failure'],
        ['Rate limit', endpoint.policy.rateLimit ? `${endpoint.policy.rateLimit.perSecond}/s, burst ${endpoint.policy.rateLimit.burst}` : 'none'],
        endpoint.pace ? ['Pace (adaptive)', h('span', { id: 'pace' }, paceText(endpoint))] : null,
        endpoint.pace ? ['Paused until', h('span', { id: 'paused-until' }, endpoint.pausedUntil && Date.parse(endpoint.pausedUntil) > Date.now() ? time(endpoint.pausedUntil) : 'not paused')] : null,
        ['Event types', endpoint.eventTypes.join(', ')],
        ['Charts', h('a', { href: `#/overview?endpointId=${encodeURIComponent(endpoint.id)}`, id: 'endpoint-charts' }, 'success rate, volume and errors')],
      ]),
    ),
    h('h2', null, 'Requests'),
    h('div', { class: 'card', id: 'request-settings' }, facts(requestSettingsFacts(endpoint))),
  ];
}
