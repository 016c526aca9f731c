// The endpoint form's request settings: static headers, auth and proxy (README, "Request settings").
// Secrets are write-only: a stored one shows •••• with Replace, and while it is not replaced it is
// left out of the request, so the API keeps it. A setting nobody touched is not sent at all.
import { h } from '../dom.js';

const MASK = '••••';

/** The auth types the API takes, as the select offers them. */
const AUTH_TYPES = [
  ['none', 'None'],
  ['basic', 'Basic (user name and password)'],
  ['bearer', 'Bearer token'],
  ['oauth2_client_credentials', 'OAuth 2.0 client credentials'],
  ['mtls', 'mTLS client certificate'],
];

const field = (forId, label, control, hint) => h('div', { class: 'field' }, h('label', { for: forId }, label), control, hint ? h('p', { class: 'hint', id: `${forId}-hint` }, hint) : null);

/**
 * A write-only secret. With nothing stored it is a plain input; with a stored value it shows ••••
 * and Replace, which reveals an empty input (Keep stored hides it again). `value()` is the text to
 * send, or undefined to keep the stored one.
 */
function secretField(id, label, { stored, multiline = false, hint } = {}) {
  const input = multiline
    ? h('textarea', { id, name: id, rows: '5', spellcheck: 'false', autocomplete: 'off' })
    : h('input', { id, name: id, type: 'password', autocomplete: 'new-password', spellcheck: 'false' });
  if (!stored) return { element: field(id, label, input, hint), value: () => input.value, replaced: () => true, input };
  let replacing = false;
  const masked = h('code', { id: `${id}-masked`, class: 'masked' }, MASK);
  const replace = h('button', { type: 'button', id: `${id}-replace` }, 'Replace');
  const keep = h('button', { type: 'button', id: `${id}-keep`, hidden: true }, 'Keep stored');
  const show = (on) => {
    replacing = on;
    input.hidden = !on;
    keep.hidden = !on;
    masked.hidden = on;
    replace.hidden = on;
    if (on) input.focus();
    else input.value = '';
  };
  replace.addEventListener('click', () => show(true));
  keep.addEventListener('click', () => show(false));
  input.hidden = true;
  return {
    element: field(id, label, h('div', { class: 'secret-line' }, masked, input, replace, keep), hint ?? 'Stored and never shown. Leave it to keep it, or replace it.'),
    value: () => (replacing ? input.value : undefined),
    replaced: () => replacing,
    input,
  };
}

/** The static headers editor: one row per header, Add header, Remove. */
function headersEditor(stored) {
  const list = h('div', { class: 'header-rows', id: 'header-rows' });
  const rows = [];
  let next = 0;

  function addRow(header) {
    const n = next++;
    const storedSecret = header?.secret === true;
    const name = h('input', { id: `header-name-${n}`, value: header?.name ?? '', placeholder: 'X-Tenant', autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Header name' });
    const value = h('input', { id: `header-value-${n}`, type: storedSecret ? 'password' : 'text', value: storedSecret ? '' : (header?.value ?? ''), placeholder: 'value', autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Header value' });
    const secret = h('input', { id: `header-secret-${n}`, type: 'checkbox', checked: storedSecret });
    const row = { n, storedSecret, replacing: !storedSecret, name, value, secret, element: null };
    const masked = storedSecret ? h('code', { class: 'masked', id: `header-masked-${n}` }, MASK) : null;
    const replace = storedSecret ? h('button', { type: 'button', id: `header-replace-${n}` }, 'Replace') : null;
    const reveal = () => {
      row.replacing = true;
      value.hidden = false;
      if (masked) masked.hidden = true;
      if (replace) replace.hidden = true;
    };
    if (storedSecret) {
      value.hidden = true;
      replace.addEventListener('click', () => {
        reveal();
        value.focus();
      });
    }
    // A stored secret made non-secret needs its value written out: the stored one is never shown.
    secret.addEventListener('change', () => {
      value.type = secret.checked ? 'password' : 'text';
      if (!secret.checked) reveal();
    });
    const remove = h('button', { type: 'button', id: `header-remove-${n}`, class: 'danger', 'aria-label': 'Remove header' }, 'Remove');
    row.element = h(
      'div',
      { class: 'header-row', id: `header-row-${n}` },
      h('div', { class: 'header-name' }, name),
      h('div', { class: 'header-value' }, masked, value, replace),
      h('label', { class: 'checkbox', for: `header-secret-${n}` }, secret, 'secret'),
      remove,
    );
    remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      row.element.remove();
    });
    rows.push(row);
    list.append(row.element);
    return row;
  }
  for (const header of stored) addRow(header);

  const add = h('button', { type: 'button', id: 'add-header', onclick: () => addRow(null).name.focus() }, '+ Add header');
  // The rows as last sent, so an API error's `headers.<i>` finds its row.
  let sent = [];
  /** The rows as the API takes them (blank rows left out); a kept secret has no value. */
  const read = () => {
    sent = rows.filter((r) => r.name.value.trim() !== '' || r.value.value !== '' || (r.storedSecret && !r.replacing));
    return sent.map((r) => {
      const header = { name: r.name.value.trim() };
      if (!r.storedSecret || r.replacing || !r.secret.checked) header.value = r.value.value;
      header.secret = r.secret.checked;
      return header;
    });
  };
  /** The input of the `i`-th header sent: its `name`, or its `value` when that is shown. */
  const inputOf = (i, part) => {
    const row = sent[i];
    if (!row) return null;
    return part === 'value' && !row.value.hidden ? row.value : row.name;
  };
  const element = h(
    'fieldset',
    { id: 'static-headers-fields' },
    h('legend', null, 'Static headers'),
    h('p', { class: 'hint' }, 'Sent with every attempt as written. A secret value is write-only: it is shown as •••• from then on.'),
    list,
    add,
  );
  return { element, read, inputOf };
}

/** The auth type select and one panel of fields per type. */
function authEditor(stored) {
  const storedType = stored?.type ?? 'none';
  const text = (id, value, attrs = {}) => h('input', { id, name: id, value: value ?? '', autocomplete: 'off', spellcheck: 'false', ...attrs });
  const area = (id, value, attrs = {}) => {
    const el = h('textarea', { id, name: id, rows: '5', spellcheck: 'false', ...attrs });
    el.value = value ?? '';
    return el;
  };
  const is = (type) => storedType === type;

  const basicUser = text('auth-username', is('basic') ? stored.username : '');
  const basicPassword = secretField('auth-password', 'Password', { stored: is('basic') });
  const bearerToken = secretField('auth-token', 'Token', { stored: is('bearer'), hint: is('bearer') ? undefined : 'Sent as Authorization: Bearer <token>.' });
  const o = is('oauth2_client_credentials') ? stored : null;
  const tokenUrl = text('auth-token-url', o?.tokenUrl, { type: 'url', placeholder: 'https://auth.example.com/oauth/token' });
  const clientId = text('auth-client-id', o?.clientId);
  const clientSecret = secretField('auth-client-secret', 'Client secret', { stored: o !== null });
  const scope = text('auth-scope', o?.scope);
  const audience = text('auth-audience', o?.audience);
  const extraParams = area('auth-extra-params', o ? Object.entries(o.extraParams).map(([k, v]) => `${k}=${v}`).join('\n') : '', { rows: '2', placeholder: 'resource=https://api.example.com', 'aria-describedby': 'auth-extra-params-hint' });
  const clientAuthentication = h(
    'select',
    { id: 'auth-client-authentication', name: 'auth-client-authentication' },
    h('option', { value: 'client_secret_basic', selected: o?.clientAuthentication !== 'client_secret_post' }, 'HTTP Basic (client_secret_basic)'),
    h('option', { value: 'client_secret_post', selected: o?.clientAuthentication === 'client_secret_post' }, 'Form fields (client_secret_post)'),
  );
  const m = is('mtls') ? stored : null;
  const certificate = area('auth-certificate', m?.certificate, { placeholder: '-----BEGIN CERTIFICATE-----' });
  const privateKey = secretField('auth-private-key', 'Private key (PEM, unencrypted)', { stored: m !== null, multiline: true });
  const ca = area('auth-ca', m?.ca, { rows: '3', placeholder: 'optional: -----BEGIN CERTIFICATE-----', 'aria-describedby': 'auth-ca-hint' });

  const panels = {
    none: null,
    basic: h('div', { class: 'auth-panel', id: 'auth-basic' }, field('auth-username', 'User name', basicUser), basicPassword.element),
    bearer: h('div', { class: 'auth-panel', id: 'auth-bearer' }, bearerToken.element),
    oauth2_client_credentials: h(
      'div',
      { class: 'auth-panel', id: 'auth-oauth2' },
      field('auth-token-url', 'Token URL', tokenUrl),
      field('auth-client-id', 'Client id', clientId),
      clientSecret.element,
      field('auth-scope', 'Scope (optional)', scope),
      field('auth-audience', 'Audience (optional)', audience),
      field('auth-client-authentication', 'Client authentication', clientAuthentication),
      field('auth-extra-params', 'More token request fields (optional)', extraParams, 'One name=value per line.'),
    ),
    mtls: h(
      'div',
      { class: 'auth-panel', id: 'auth-mtls' },
      field('auth-certificate', 'Client certificate (PEM)', certificate),
      privateKey.element,
      field('auth-ca', 'CA for the receiver’s certificate (optional)', ca, 'Trusted instead of the default roots.'),
    ),
  };
  const type = h('select', { id: 'auth-type', name: 'auth-type' }, AUTH_TYPES.map(([value, label]) => h('option', { value, selected: value === storedType }, label)));
  const showPanel = () => {
    for (const [key, panel] of Object.entries(panels)) if (panel) panel.hidden = key !== type.value;
  };
  type.addEventListener('change', showPanel);
  showPanel();

  const optional = (input) => (input.value.trim() === '' ? null : input.value.trim());
  /** The non-secret fields of the chosen type, and its secret when given. */
  function build() {
    const withSecret = (auth, key, secret) => {
      const value = secret.value();
      return value === undefined ? auth : { ...auth, [key]: value };
    };
    switch (type.value) {
      case 'basic':
        return withSecret({ type: 'basic', username: basicUser.value }, 'password', basicPassword);
      case 'bearer':
        return withSecret({ type: 'bearer' }, 'token', bearerToken);
      case 'oauth2_client_credentials': {
        const params = {};
        for (const line of extraParams.value.split('\n').map((l) => l.trim()).filter(Boolean)) {
          const eq = line.indexOf('=');
          if (eq <= 0) throw new Error(`Each token request field is name=value on its own line; “${line}” is not.`);
          params[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
        }
        const auth = { type: 'oauth2_client_credentials', tokenUrl: tokenUrl.value.trim(), clientId: clientId.value, scope: optional(scope), audience: optional(audience), extraParams: params, clientAuthentication: clientAuthentication.value };
        return withSecret(auth, 'clientSecret', clientSecret);
      }
      case 'mtls':
        return withSecret({ type: 'mtls', certificate: certificate.value, ca: ca.value.trim() === '' ? null : ca.value }, 'privateKey', privateKey);
      default:
        return null;
    }
  }
  const secrets = { basic: basicPassword, bearer: bearerToken, oauth2_client_credentials: clientSecret, mtls: privateKey };
  /** The `auth` to send, or undefined when it is as stored. */
  function read() {
    const auth = build();
    if (auth === null) return stored ? null : undefined;
    if (!stored || type.value !== storedType || secrets[type.value].replaced()) return auth;
    // The same type with no secret given: send it only if a visible field changed.
    const asStored = Object.fromEntries(Object.keys(auth).map((k) => [k, stored[k]]));
    return JSON.stringify(auth) === JSON.stringify(asStored) ? undefined : auth;
  }
  const element = h(
    'fieldset',
    { id: 'auth-fields' },
    h('legend', null, 'Authentication'),
    field('auth-type', 'How each attempt authenticates', type),
    Object.values(panels).filter(Boolean),
  );
  return { element, read };
}

/** The egress proxy: its URL, and optional user name and (write-only) password. */
function proxyEditor(stored) {
  const url = h('input', { id: 'proxy-url', name: 'proxy-url', type: 'url', value: stored?.url ?? '', placeholder: 'http://proxy.internal:3128', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'proxy-url-hint' });
  const username = h('input', { id: 'proxy-username', name: 'proxy-username', value: stored?.username ?? '', autocomplete: 'off', spellcheck: 'false' });
  const password = secretField('proxy-password', 'Proxy password', { stored: stored?.username != null });
  /** The `proxy` to send, or undefined when it is as stored; throws a sentence when a kept password cannot be. */
  function read() {
    const raw = url.value.trim();
    const user = username.value.trim();
    if (raw === '') return stored ? null : undefined;
    if (stored && raw === stored.url && user === (stored.username ?? '') && !password.replaced()) return undefined;
    if (user === '') return raw;
    const pass = password.value();
    if (pass === undefined) throw new Error('Changing the proxy replaces its credentials: replace the proxy password too.');
    let parsed;
    try {
      parsed = new URL(raw);
    } catch {
      return raw;
    }
    // Anything but scheme://host:port is left as typed, for the API to name.
    if (parsed.username || parsed.password || (parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search || parsed.hash) return raw;
    return `${parsed.protocol}//${encodeURIComponent(user)}:${encodeURIComponent(pass)}@${parsed.host}`;
  }
  const element = h(
    'fieldset',
    { id: 'proxy-fields' },
    h('legend', null, 'Egress proxy'),
    field('proxy-url', 'Proxy URL (optional)', url, 'This endpoint’s requests tunnel through it (CONNECT). Empty: the sender’s own proxy, if it has one.'),
    field('proxy-username', 'Proxy user name (optional)', username),
    password.element,
  );
  return { element, read };
}

/**
 * The request-settings part of the endpoint form for `endpoint` (null when creating).
 * `element` goes into the form; `body()` is `{headers?, auth?, proxy?}`, only the settings that
 * changed (on create: only those set), and throws an Error with a sentence for a mistake the form
 * can see itself. `fieldFor(path)` is the input an API error's field names (`headers.0.name`,
 * `auth.clientSecret`, `proxy`), for marking it.
 */
export function requestSettingsFields(endpoint) {
  const storedHeaders = endpoint?.headers ?? [];
  const headers = headersEditor(storedHeaders);
  const auth = authEditor(endpoint?.auth ?? null);
  const proxy = proxyEditor(endpoint?.proxy ?? null);
  const comparable = (list) => JSON.stringify(list.map((x) => (x.secret && x.value === undefined ? { name: x.name, secret: true } : { name: x.name, value: x.value, secret: x.secret })));
  const storedComparable = comparable(storedHeaders.map((x) => (x.secret ? { name: x.name, secret: true } : x)));

  function body() {
    const out = {};
    const list = headers.read();
    if (endpoint ? comparable(list) !== storedComparable : list.length > 0) out.headers = list;
    const a = auth.read();
    if (a !== undefined) out.auth = a;
    const p = proxy.read();
    if (p !== undefined) out.proxy = p;
    return out;
  }

  function fieldFor(path) {
    const header = /^headers\.(\d+)(?:\.(name|value))?$/.exec(path);
    if (header) return headers.inputOf(Number(header[1]), header[2]);
    if (path === 'proxy') return document.getElementById('proxy-url');
    const authField = /^auth\.([A-Za-z]+)/.exec(path);
    if (authField) return document.getElementById(`auth-${authField[1].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    return path === 'auth' ? document.getElementById('auth-type') : null;
  }

  return {
    element: [h('h2', { id: 'request-settings-heading' }, 'Requests'), headers.element, auth.element, proxy.element],
    body,
    fieldFor,
  };
}
