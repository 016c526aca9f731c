// The portal inside a host application: its branding, and the messages it sends to the page that
// frames it ({type: "postern:ready"} once, {type: "postern:resize", height} whenever its height
// changes), so the host can size the iframe to fit and never show a second scroll bar.

const framed = window.parent !== window;

/** Sends a message to the framing page. The messages carry no data of the org, so any origin may hear them. */
function tell(message) {
  if (framed) window.parent.postMessage(message, '*');
}

let lastHeight = 0;
function reportHeight() {
  const height = Math.ceil(document.documentElement.scrollHeight);
  if (height === lastHeight) return;
  lastHeight = height;
  tell({ type: 'postern:resize', height });
}

let ready = false;
/** Reports the page's height to the framing page now and on every change; `postern:ready` goes first, once. */
export function startEmbedding() {
  if (!framed) return;
  const observer = new ResizeObserver(() => {
    if (!ready) return;
    reportHeight();
  });
  observer.observe(document.body);
  const main = document.getElementById('main');
  // Ready once the first page (or the page saying why there is none) is shown.
  const started = new MutationObserver(() => {
    if (ready || main.querySelector('[aria-busy="true"]') || main.childElementCount === 0) return;
    ready = true;
    started.disconnect();
    tell({ type: 'postern:ready' });
    reportHeight();
  });
  started.observe(main, { childList: true, subtree: true });
}

/**
 * Shows the org's branding (`GET /v1/portal`): its name instead of "Postern", its logo, its accent
 * (checked for WCAG AA by the API, with the text colour to put on it). A portal session without a
 * display name says "Webhooks", never the org id.
 */
export function applyBranding(portal, isSession) {
  // The org's branding is for its customers' portal; the operator console stays Postern's.
  const b = isSession ? (portal?.branding ?? {}) : {};
  const brand = document.querySelector('.brand');
  const name = b.displayName ?? (isSession ? 'Webhooks' : 'Postern');
  brand.replaceChildren();
  if (b.logoUrl) {
    const img = document.createElement('img');
    img.src = b.logoUrl;
    img.alt = '';
    img.className = 'brand-logo';
    brand.append(img);
  }
  brand.append(document.createTextNode(name));
  document.title = isSession ? `${name} · webhooks` : 'Postern dashboard';
  const root = document.documentElement.style;
  if (b.accentColor) {
    root.setProperty('--accent', b.accentColor);
    root.setProperty('--accent-dark', b.accentColor);
    root.setProperty('--on-accent', b.accentText ?? '#ffffff');
    document.body.classList.add('branded');
  }
  document.body.classList.toggle('customer', portal?.mode === 'customer');
}

/** The phone layout's menu: the top bar shows the brand and this button; the rest opens below it. */
export function menuToggle(topbar) {
  const button = document.getElementById('menu-toggle');
  button.addEventListener('click', () => {
    const open = topbar.classList.toggle('open');
    button.setAttribute('aria-expanded', String(open));
  });
  window.addEventListener('hashchange', () => {
    topbar.classList.remove('open');
    button.setAttribute('aria-expanded', 'false');
  });
}
