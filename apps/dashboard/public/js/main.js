// The dashboard shell: sign-in, hash routing, the notice area, focus handling.
import { createApi } from './api.js';
import { h } from './dom.js';
import { apiKeysView } from './views/api-keys.js';
import { deliveryView } from './views/delivery.js';
import { endpointView } from './views/endpoint.js';
import { endpointFormView } from './views/endpoint-form.js';
import { endpointsView } from './views/endpoints.js';
import { eventView } from './views/event.js';
import { eventsView } from './views/events.js';
import { overviewView } from './views/overview.js';
import { searchForm } from './views/search.js';
import { notificationsView } from './views/notifications.js';
import { auditLogView } from './views/audit-log.js';
import { timelineView } from './views/timeline.js';
import { failedView } from './views/failed.js';
import { applyBranding, menuToggle, startEmbedding } from './embed.js';

// sessionStorage: the key lives as long as the tab, never on disk across sessions.
const KEY_STORAGE = 'postern.apiKey';

/**
 * The credential's home: sessionStorage where the browser allows it, else this page's memory. A
 * portal framed by another site may be denied storage (third-party storage blocked, or a sandboxed
 * iframe without allow-same-origin, where touching sessionStorage throws SecurityError): it then
 * works all the same until the frame is reloaded.
 */
const tokens = (() => {
  let storage = null;
  try {
    storage = window.sessionStorage;
    storage.getItem(KEY_STORAGE);
  } catch {
    storage = null;
  }
  let memory = null;
  return {
    get: () => {
      try {
        return storage ? storage.getItem(KEY_STORAGE) : memory;
      } catch {
        return memory;
      }
    },
    set: (value) => {
      memory = value;
      try {
        storage?.setItem(KEY_STORAGE, value);
      } catch {
        // Kept in memory only.
      }
    },
    remove: () => {
      memory = null;
      try {
        storage?.removeItem(KEY_STORAGE);
      } catch {
        // Nothing stored.
      }
    },
  };
})();
// A portal session's token starts with this (POST /v1/orgs/:id/portal-sessions).
const PORTAL_TOKEN_PREFIX = 'pst_';
const onPortalPage = /\/portal$/.test(location.pathname);

// A portal URL carries its token in the fragment (`#session=pst_…`), which no server ever sees.
// Take it, keep it in this tab only, and take it out of the address bar and the history at once.
{
  const fragment = /^#session=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (fragment) {
    tokens.set(fragment[1]);
    try {
      history.replaceState(null, '', `${location.pathname}${location.search}#/endpoints`);
    } catch {
      // A sandboxed frame (opaque origin) may not rewrite its history: replace the fragment instead.
      location.replace('#/endpoints');
    }
  }
}

/** True when the tab is signed in with a portal session rather than an API key. */
function isPortalSession() {
  return (tokens.get() ?? '').startsWith(PORTAL_TOKEN_PREFIX);
}

const ROUTES = [
  { pattern: /^\/overview$/, view: overviewView, nav: 'overview' },
  { pattern: /^\/endpoints$/, view: endpointsView, nav: 'endpoints' },
  { pattern: /^\/endpoints\/new$/, view: endpointFormView, nav: 'endpoints' },
  { pattern: /^\/endpoints\/([^/]+)\/edit$/, view: endpointFormView, nav: 'endpoints' },
  { pattern: /^\/endpoints\/([^/]+)\/timeline$/, view: timelineView, nav: 'endpoints' },
  { pattern: /^\/endpoints\/([^/]+)$/, view: endpointView, nav: 'endpoints' },
  { pattern: /^\/deliveries\/([^/]+)$/, view: deliveryView, nav: 'endpoints' },
  { pattern: /^\/events$/, view: eventsView, nav: 'events' },
  { pattern: /^\/events\/([^/]+)$/, view: eventView, nav: 'events' },
  { pattern: /^\/notifications$/, view: notificationsView, nav: 'notifications' },
  { pattern: /^\/failed$/, view: failedView, nav: 'failed' },
  { pattern: /^\/api-keys$/, view: apiKeysView, nav: 'api-keys' },
  { pattern: /^\/audit-log$/, view: auditLogView, nav: 'audit-log' },
];

const main = document.getElementById('main');
const noticeArea = document.getElementById('notice');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const searchSlot = document.getElementById('search-slot');

const api = createApi(() => tokens.get() ?? '');
let me = null;
/** `GET /v1/portal`: mode (customer/operator), branding, policy choices. */
let portal = null;
let generation = 0;
let timers = [];
let carriedNotice = null;
let visit = 0;

function stopTimers() {
  for (const t of timers) clearInterval(t);
  timers = [];
}

/**
 * The page's live stream (`GET /v1/deliveries/stream`), kept across reloads of the same page so a
 * change that reloads the page does not reconnect: `{key, controller, onChange, failed}`. A page
 * render that does not ask for it again closes it.
 */
let live = null;
let liveClaimed = false;
let liveReload = null;

function closeLive() {
  live?.controller.abort();
  live = null;
  clearTimeout(liveReload);
  liveReload = null;
}

/**
 * Follows the org's deliveries matching `query` live; `onChange(change)` decides whether a change
 * matters, and a page reload follows (at most one per 250 ms). When the stream cannot be had (an
 * old server, a proxy that buffers, a network error), the page falls back to polling every
 * `fallbackMs`, as it did before streams.
 */
function followLive(query, onChange, fallbackMs, reload, every) {
  liveClaimed = true;
  const key = new URLSearchParams(query).toString();
  if (live && live.key === key) {
    live.onChange = onChange;
    live.reload = reload;
    if (live.failed && fallbackMs > 0) every(fallbackMs, reload);
    return;
  }
  closeLive();
  const controller = new AbortController();
  const current = { key, controller, onChange, reload, failed: false };
  live = current;
  document.documentElement.dataset.live = 'connecting';
  const schedule = () => {
    if (liveReload === null) liveReload = setTimeout(() => {
      liveReload = null;
      if (live === current) void current.reload();
    }, 250);
  };
  api
    .stream(`/v1/deliveries/stream?${key}`, (message) => {
      if (live !== current) return;
      if (message.event === 'delivery' ? current.onChange(message.data) : true) schedule();
    }, controller.signal, () => {
      if (live !== current) return;
      document.documentElement.dataset.live = 'live';
      // What changed between the page's read and the stream's start came before the stream: one
      // reload catches it up (a redelivery that finished while the page was opening).
      schedule();
    })
    .catch(() => undefined)
    .finally(() => {
      if (live !== current || controller.signal.aborted) return;
      // Ended or failed: poll from now on (the next render sees `failed`), and reload once now.
      current.failed = true;
      document.documentElement.dataset.live = 'polling';
      schedule();
    });
}

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/endpoints';
  const [path, search = ''] = raw.split('?');
  return { path: path.replace(/\/+$/, '') || '/endpoints', query: new URLSearchParams(search) };
}

/** Shows a message above the page; `link` is an optional `{href, text}`. Errors stay until dismissed. */
function notify(text, kind = 'ok', link = null) {
  noticeArea.replaceChildren(
    h(
      'div',
      { class: `notice notice--${kind}`, role: kind === 'error' ? 'alert' : undefined },
      h('p', null, text, link ? [' ', h('a', { href: link.href }, link.text)] : null),
      h('button', { type: 'button', onclick: () => noticeArea.replaceChildren(), 'aria-label': 'Dismiss message' }, '✕'),
    ),
  );
}

function signOut() {
  closeLive();
  tokens.remove();
  me = null;
  noticeArea.replaceChildren();
  location.hash = '#/endpoints';
  void render({ navigated: true });
}

function renderShell() {
  nav.hidden = false;
  const session = me.portalSession != null;
  const customer = portal?.mode === 'customer';
  for (const a of nav.querySelectorAll('a')) {
    // A portal session cannot manage API keys (the API answers 403 api_key_required).
    if (a.dataset.nav === 'api-keys') a.hidden = session || !me.scopes.includes('webhooks:read');
    // Nor read the audit log.
    if (a.dataset.nav === 'audit-log') a.hidden = session;
    // Breaker notifications speak of streaks and thresholds: the operator's view.
    if (a.dataset.nav === 'notifications') a.hidden = customer;
  }
  const readOnly = !me.scopes.includes('webhooks:write');
  who.hidden = false;
  searchSlot.hidden = false;
  if (!searchSlot.firstChild) {
    searchSlot.append(
      searchForm((hash) => {
        location.hash = hash;
      }),
    );
  }
  if (session) {
    const until = new Date(me.portalSession.expiresAt);
    const support = portal?.branding.supportUrl;
    who.replaceChildren(
      customer ? null : h('span', null, 'Org ', h('code', null, me.orgId)),
      support ? h('a', { href: support, target: '_blank', rel: 'noopener', id: 'support-link' }, 'Help') : null,
      h('span', { class: 'scopes', 'data-testid': 'key-summary' }, `Portal session until ${until.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}${readOnly ? ' · read-only' : ''}`),
    );
    return;
  }
  who.replaceChildren(
    h('span', null, 'Org ', h('code', null, me.orgId)),
    h('span', { class: 'scopes', 'data-testid': 'key-summary' }, `Key “${me.name}” (pk_${me.prefix}…): ${me.scopes.join(', ')}${readOnly ? ' · read-only' : ''}`),
    h('button', { type: 'button', onclick: signOut }, 'Sign out'),
  );
}

/**
 * The page a portal session ends on: expired, revoked, or never given. There is no key to paste
 * here; a new session comes from the application that opened the portal.
 */
function showSessionEnded(code) {
  stopTimers();
  closeLive();
  clearTimeout(expiryTimer);
  tokens.remove();
  me = null;
  nav.hidden = true;
  who.hidden = true;
  searchSlot.hidden = true;
  noticeArea.replaceChildren();
  const [title, text] =
    code === 'session_revoked'
      ? ['This session was ended', 'Access through this link was revoked. Open the webhooks page again from the application that sent you here.']
      : code === 'session_expired'
        ? ['This session has expired', 'Links to this page work for a limited time. Open the webhooks page again from the application that sent you here.']
        : ['No session', 'This page opens only from a link made for you by the application that sent you here. Open it again from there.'];
  main.replaceChildren(h('div', { class: 'card signin', 'data-testid': 'session-ended', 'data-reason': code }, h('h1', { tabindex: '-1' }, title), h('p', null, text)));
  main.querySelector('h1')?.focus();
}

/** Ends the page when a portal session reaches its expiry, even if nothing calls the API then. */
let expiryTimer;
function watchExpiry() {
  clearTimeout(expiryTimer);
  if (!me?.portalSession) return;
  const ms = Date.parse(me.portalSession.expiresAt) - Date.now();
  // setTimeout holds at most 2^31-1 ms; sessions last a day at most.
  expiryTimer = setTimeout(() => showSessionEnded('session_expired'), Math.max(0, Math.min(ms, 2 ** 31 - 1)));
}

/** A 401 on a portal session: say why on a page of its own, never offer the API-key form. */
function isPortalEnd(err) {
  return err.status === 401 && (isPortalSession() || onPortalPage || err.code === 'session_expired' || err.code === 'session_revoked');
}

function showSignIn(message) {
  closeLive();
  nav.hidden = true;
  who.hidden = true;
  searchSlot.hidden = true;
  const input = h('input', { id: 'api-key', name: 'apiKey', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'api-key-hint' });
  const form = h(
    'form',
    {
      class: 'card signin',
      onsubmit: (e) => {
        e.preventDefault();
        const key = input.value.trim();
        if (!key) return;
        tokens.set(key);
        me = null;
        void render({ navigated: true });
      },
    },
    h('h1', { tabindex: '-1' }, 'Sign in to Postern'),
    h('p', { class: 'subtitle' }, 'Paste an API key of your organisation. It stays in this browser tab only and is sent to Postern’s API on this site.'),
    message ? h('p', { class: 'error-box', role: 'alert' }, message) : null,
    h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input, h('p', { id: 'api-key-hint', class: 'hint' }, 'Starts with pk_. A key with only webhooks:read shows everything but changes nothing.')),
    h('button', { type: 'submit', class: 'primary' }, 'Open dashboard'),
  );
  main.replaceChildren(form);
  input.focus();
}

/**
 * Renders the current route. `navigated` (a new page) moves focus to the page heading; a reload
 * of the same page (after an action, or polling) keeps focus and scroll where they were.
 */
async function render({ navigated }) {
  const gen = ++generation;
  stopTimers();
  liveClaimed = false;
  if (!tokens.get()) return onPortalPage ? showSessionEnded('no_session') : showSignIn();
  if (!me) {
    main.replaceChildren(h('p', { 'aria-busy': 'true' }, isPortalSession() ? 'Opening your session…' : 'Checking the API key…'));
    try {
      me = await api.get('/v1/me');
      portal = await api.get('/v1/portal');
      applyBranding(portal, me.portalSession != null);
      watchExpiry();
    } catch (err) {
      if (gen !== generation) return;
      if (isPortalEnd(err)) return showSessionEnded(err.code);
      if (err.status === 401 || err.status === 403) {
        tokens.remove();
        return showSignIn(err.sentence);
      }
      main.replaceChildren(h('div', { class: 'error-box', role: 'alert' }, h('p', null, err.sentence), h('button', { type: 'button', onclick: () => render({ navigated: true }) }, 'Try again')));
      return;
    }
    if (gen !== generation) return;
  }
  renderShell();

  const { path, query } = parseHash();
  const route = ROUTES.find((r) => r.pattern.test(path));
  if (!route) {
    location.replace('#/endpoints');
    return;
  }
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.nav === route.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (navigated) {
    visit += 1;
    noticeArea.replaceChildren();
    if (carriedNotice) notify(...carriedNotice);
    carriedNotice = null;
    main.replaceChildren(h('p', { 'aria-busy': 'true', class: 'empty' }, 'Loading…'));
  }

  let params;
  try {
    params = route.pattern.exec(path).slice(1).map(decodeURIComponent);
  } catch {
    // A malformed escape (`#/endpoints/%ZZ`): say so instead of loading forever.
    main.replaceChildren(h('div', { class: 'error-box', role: 'alert' }, h('h1', { tabindex: '-1' }, 'This page could not be shown'), h('p', null, 'The address is not valid: it holds a malformed % escape. Check the link, or go back to the endpoints.'), h('a', { class: 'button', href: '#/endpoints' }, 'Endpoints')));
    main.querySelector('h1')?.focus();
    return;
  }
  const pageVisit = visit;
  const ctx = {
    api,
    me,
    portal,
    /** A portal session in customer mode: plain words, the org's policy choices, no internals. */
    customer: portal?.mode === 'customer',
    canWrite: me.scopes.includes('webhooks:write'),
    params,
    query,
    notify,
    /** Counts page visits: a reload of the same page keeps it, navigating changes it. */
    visit,
    /** Goes to another page; `notice` is shown there. */
    navigate(hash, notice = null) {
      carriedNotice = notice;
      location.hash = hash;
    },
    /**
     * Renders this page again with fresh data, keeping focus. Keyed to the visit, not the render: an
     * action that finishes while a poll re-renders the page must still show its outcome.
     */
    reload: () => (pageVisit === visit ? render({ navigated: false }) : Promise.resolve()),
    /** Runs `fn` every `ms` while this page is shown. */
    every(ms, fn) {
      if (gen === generation) timers.push(setInterval(fn, ms));
    },
    /**
     * Reloads this page when a delivery of the org matching `query` (`endpointId`, `status`,
     * `eventType`) changes and `onChange(change)` says it matters (default: every change), from
     * the live stream; polls every `fallbackMs` instead when the stream fails.
     */
    live(query, { fallbackMs, onChange = () => true }) {
      if (gen === generation) followLive(query, onChange, fallbackMs, () => ctx.reload(), (ms, fn) => ctx.every(ms, fn));
    },
    isCurrent: () => gen === generation,
  };

  const focused = document.activeElement;
  const focusKey = focused?.dataset?.focus ?? focused?.id;
  const scrollY = window.scrollY;
  let view;
  try {
    view = await route.view(ctx);
  } catch (err) {
    if (gen !== generation) return;
    if (isPortalEnd(err)) return showSessionEnded(err.code);
    if (err.status === 401) {
      me = null;
      tokens.remove();
      return showSignIn(err.sentence);
    }
    view = h(
      'div',
      { class: 'error-box', role: 'alert' },
      h('h1', { tabindex: '-1' }, 'This page could not be shown'),
      h('p', null, err.sentence ?? 'Something went wrong in the dashboard. Reload the page and try again.'),
      h('button', { type: 'button', id: 'retry', onclick: () => ctx.reload() }, 'Try again'),
    );
    if (!err.sentence) console.error(err);
  }
  if (gen !== generation) return;
  if (!liveClaimed) closeLive();
  main.replaceChildren(view);
  if (navigated) {
    const heading = main.querySelector('h1');
    heading?.setAttribute('tabindex', '-1');
    (heading ?? main).focus({ preventScroll: true });
    window.scrollTo(0, 0);
  } else {
    window.scrollTo(0, scrollY);
    if (focusKey) (main.querySelector(`[data-focus="${CSS.escape(focusKey)}"]`) ?? document.getElementById(focusKey))?.focus({ preventScroll: true });
  }
}

window.addEventListener('hashchange', () => void render({ navigated: true }));
// Never a blank frame: an error no view caught still ends on a page that says what to do.
window.addEventListener('unhandledrejection', (e) => showBroken(e.reason));
window.addEventListener('error', (e) => showBroken(e.error));
function showBroken(err) {
  console.error(err);
  if (main.querySelector('[data-testid="page-error"]')) return;
  if (main.childElementCount > 0 && !main.querySelector('[aria-busy="true"]')) return;
  main.replaceChildren(h('div', { class: 'error-box', role: 'alert', 'data-testid': 'page-error' }, h('h1', { tabindex: '-1' }, 'This page could not be shown'), h('p', null, 'Something went wrong while opening this page. Reload it, or open it again from the application that sent you here.'), h('button', { type: 'button', onclick: () => location.reload() }, 'Reload')));
}
startEmbedding();
menuToggle(document.querySelector('.topbar'));
void render({ navigated: true });
