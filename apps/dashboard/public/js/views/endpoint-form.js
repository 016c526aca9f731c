// Create or edit an endpoint: URL, description, event types, request settings (headers, auth,
// proxy) and policy (a preset plus optional overrides), with the attempt timeline that policy gives
// shown before saving. Edit also deletes.
import { actionButton } from '../actions.js';
import { h } from '../dom.js';
import { duration } from '../format.js';
import { timelineChart } from '../timeline-chart.js';
import { requestSettingsFields } from './request-settings-fields.js';
import { transformationFields } from './transformation-fields.js';

const KEEP = '__keep__';

/** `#/endpoints/new` and `#/endpoints/:id/edit` */
export async function endpointFormView(ctx) {
  const [id] = ctx.params;
  const editing = id !== undefined;
  const [endpoint, presets, catalog] = await Promise.all([editing ? ctx.api.get(`/v1/endpoints/${encodeURIComponent(id)}`) : null, ctx.api.get('/v1/policies'), ctx.api.get('/v1/event-types').then((r) => r.data)]);
  if (!ctx.canWrite) {
    return h('section', null, h('h1', null, editing ? 'Edit endpoint' : 'New endpoint'), h('p', { class: 'error-box', role: 'alert' }, 'This API key is read-only (it lacks the webhooks:write scope), so it cannot create or change endpoints.'));
  }
  const field = (forId, label, control, hint) => h('div', { class: 'field' }, h('label', { for: forId }, label), control, hint ? h('p', { class: 'hint', id: `${forId}-hint` }, hint) : null);
  const url = h('input', { id: 'endpoint-url', name: 'url', type: 'url', required: true, value: endpoint?.url ?? '', placeholder: 'https://example.com/webhooks', autocomplete: 'off', spellcheck: 'false' });
  const description = h('input', { id: 'endpoint-description', name: 'description', value: endpoint?.description ?? '', maxlength: '500' });
  const eventTypes = h('input', { id: 'endpoint-event-types', name: 'eventTypes', value: (endpoint?.eventTypes ?? ['*']).join(', '), spellcheck: 'false', 'aria-describedby': 'endpoint-event-types-hint' });
  const picker = catalog.length > 0 ? catalogPicker(catalog, endpoint?.eventTypes ?? ['*'], eventTypes) : null;
  if (ctx.customer) return customerForm(ctx, { editing, id, endpoint, picker, eventTypesInput: eventTypes });
  const startPreset = editing ? (endpoint.policyName ?? KEEP) : 'standard';
  const preset = h(
    'select',
    { id: 'endpoint-policy', name: 'policy' },
    editing && endpoint.policyName === null ? h('option', { value: KEEP, selected: true }, 'Keep the current custom policy') : null,
    presets.data.map((p) => h('option', { value: p.name, selected: p.name === startPreset }, p.seed ? `${p.name} (seed ${p.seed})` : p.name)),
  );
  // The scheme is chosen at creation; afterwards it changes with a rotation (endpoint page).
  const scheme = editing
    ? null
    : h(
        'select',
        { id: 'endpoint-signature-scheme', name: 'signatureScheme', 'aria-describedby': 'endpoint-signature-scheme-hint' },
        h('option', { value: 'hmac-sha256', selected: true }, 'HMAC-SHA256 (v1, shared whsec_ secret)'),
        h('option', { value: 'ed25519' }, 'Ed25519 (v1a, whpk_ public key)'),
      );
  const requestSettings = requestSettingsFields(endpoint);
  const transformation = transformationFields(ctx, endpoint, () => url.value.trim());
  const overrides = h('textarea', { id: 'endpoint-overrides', name: 'overrides', rows: '3', spellcheck: 'false', placeholder: '{"maxAttempts": 3}', 'aria-describedby': 'endpoint-overrides-hint' });
  const summary = h('p', { class: 'hint', id: 'policy-summary' });
  const preview = h('div', { id: 'policy-preview', 'aria-live': 'polite' });

  /** The `policy` field to send, or undefined to leave it as it is; throws a sentence on bad JSON. */
  function policyInput() {
    const text = overrides.value.trim();
    let extra = {};
    if (text) {
      try {
        extra = JSON.parse(text);
      } catch {
        throw new Error('Overrides must be a JSON object, e.g. {"maxAttempts": 3}.');
      }
      if (extra === null || typeof extra !== 'object' || Array.isArray(extra)) throw new Error('Overrides must be a JSON object, e.g. {"maxAttempts": 3}.');
    }
    if (preset.value === KEEP) return text ? { ...endpoint.policy, ...extra } : undefined;
    return text ? { preset: preset.value, ...extra } : preset.value;
  }

  async function showPreview() {
    const chosen = presets.data.find((p) => p.name === preset.value);
    summary.textContent = chosen ? chosen.summary : 'The endpoint’s current custom policy.';
    let policy;
    try {
      policy = policyInput() ?? endpoint.policy;
    } catch (err) {
      preview.replaceChildren(h('p', { class: 'error-box' }, err.message));
      return;
    }
    try {
      const r = await ctx.api.post('/v1/policies/preview', { policy });
      const main = document.getElementById('main');
      const width = Math.min(1100, (main?.clientWidth ?? 800) - 80);
      const last = r.attempts[r.attempts.length - 1];
      preview.replaceChildren(
        h('p', { id: 'preview-words' }, `${r.policy.maxAttempts} attempts; the last starts ${last.attempt === 1 ? 'at once' : `${duration(last.earliestMs)}–${duration(last.latestMs)} after the first`}, if every attempt fails. Timeout ${duration(r.policy.timeout.ms)}.`),
        timelineChart(r.attempts, width),
      );
    } catch (err) {
      preview.replaceChildren(h('p', { class: 'error-box', id: 'preview-error' }, err.sentence ?? 'The preview could not be computed.'));
    }
  }
  preset.addEventListener('change', () => void showPreview());
  overrides.addEventListener('change', () => void showPreview());

  /** Marks and focuses the input a 400's message names (`headers.0.name: …`, `auth.token: …`, `proxy: …`). */
  function markField(err) {
    const path = /^([A-Za-z0-9_.]+): /.exec(err.message ?? '')?.[1];
    if (!path || err.status !== 400) return;
    const input = path === 'url' ? url : path.startsWith('transformation') ? document.getElementById('transformation-code') : requestSettings.fieldFor(path);
    if (!input || input.hidden) return;
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }

  const save = h('button', { type: 'submit', class: 'primary', id: 'save-endpoint' }, editing ? 'Save changes' : 'Create endpoint');
  const form = h(
    'form',
    {
      class: 'card form',
      onsubmit: async (e) => {
        e.preventDefault();
        for (const marked of form.querySelectorAll('[aria-invalid="true"]')) marked.removeAttribute('aria-invalid');
        let policy;
        let settings;
        try {
          policy = policyInput();
          settings = requestSettings.body();
        } catch (err) {
          ctx.notify(err.message, 'error');
          return;
        }
        const body = {
          url: url.value.trim(),
          description: description.value,
          eventTypes: eventTypes.value.split(',').map((t) => t.trim()).filter(Boolean),
          ...settings,
          ...transformation.body(),
        };
        if (policy !== undefined) body.policy = policy;
        if (scheme) body.signatureScheme = scheme.value;
        save.setAttribute('aria-busy', 'true');
        try {
          const saved = editing ? await ctx.api.patch(`/v1/endpoints/${encodeURIComponent(id)}`, body) : await ctx.api.post('/v1/endpoints', body);
          ctx.navigate(`#/endpoints/${encodeURIComponent(saved.id)}`, [editing ? 'Endpoint saved.' : 'Endpoint created. Its signing secret can be revealed on this page whenever you need it.', 'ok']);
        } catch (err) {
          ctx.notify(err.sentence ?? 'Something went wrong in the dashboard; reload the page and try again.', 'error');
          markField(err);
        } finally {
          save.removeAttribute('aria-busy');
        }
      },
    },
    field('endpoint-url', 'URL', url),
    field('endpoint-description', 'Description', description),
    picker ? picker.element : null,
    field('endpoint-event-types', picker ? 'Event types (as text)' : 'Event types', eventTypes, 'Comma-separated, e.g. invoice.paid, invoice.failed; * receives every type.'),
    scheme ? field('endpoint-signature-scheme', 'Signatures', scheme, 'Standard Webhooks: HMAC needs the secret at the receiver; with Ed25519 the receiver holds only the public key.') : null,
    requestSettings.element,
    transformation.element,
    h('h2', null, 'Policy'),
    field('endpoint-policy', 'Policy', preset),
    summary,
    field('endpoint-overrides', 'Overrides (optional)', overrides, 'A JSON object of policy fields that replace the preset’s, e.g. {"maxAttempts": 3, "keepResponseBody": "all"}. The timeline below follows it.'),
    h('button', { type: 'button', id: 'preview-policy', onclick: () => void showPreview() }, 'Update timeline'),
    h('h2', null, 'Attempt timeline before saving'),
    preview,
    h('div', { class: 'actions' }, save, h('a', { class: 'button', href: editing ? `#/endpoints/${encodeURIComponent(id)}` : '#/endpoints' }, 'Cancel')),
  );
  void showPreview();

  const title = editing ? 'Edit endpoint' : 'New endpoint';
  return h(
    'section',
    null,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/endpoints' }, 'Endpoints'), ' › ', editing ? [h('a', { href: `#/endpoints/${encodeURIComponent(id)}` }, endpoint.url), ' › '] : null, h('span', { 'aria-current': 'page' }, title)),
    h('h1', null, title),
    form,
    editing
      ? [
          h('h2', null, 'Delete'),
          h(
            'div',
            { class: 'card' },
            h('p', null, 'Deleting the endpoint stops every delivery to it: queued ones end cancelled before their next attempt. The delivery log stays until retention removes it.'),
            deleteButton(ctx, endpoint, id),
          ),
        ]
      : null,
  );
}

/**
 * Subscribing from the catalog: one checkbox per event type (by group), its description and, open
 * on demand, its example payloads; "All event types" stands for `*`. Keeps `input` (the text
 * field operators may also type in) in step, so either way of choosing sends the same list.
 */
function catalogPicker(catalog, selected, input) {
  const all = h('input', { type: 'checkbox', id: 'type-all', name: 'typeAll', checked: selected.includes('*') });
  const boxes = [];
  const sync = () => {
    const names = boxes.filter((b) => b.checked).map((b) => b.value);
    for (const b of boxes) b.disabled = all.checked;
    input.value = all.checked ? '*' : names.join(', ');
  };
  all.addEventListener('change', sync);
  const groups = new Map();
  for (const t of catalog) {
    const g = t.group ?? 'Other';
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(t);
  }
  const element = h(
    'fieldset',
    { class: 'catalog-picker', id: 'catalog-picker' },
    h('legend', null, 'Event types'),
    h('label', { class: 'checkbox' }, all, 'All event types, including ones added later'),
    [...groups].map(([group, types]) =>
      h(
        'div',
        { class: 'catalog-group' },
        h('h3', null, group),
        types.map((t) => {
          const box = h('input', { type: 'checkbox', name: 'eventType', value: t.name, id: `type-${t.name}`, checked: selected.includes(t.name), disabled: selected.includes('*'), 'aria-describedby': `type-${t.name}-about` });
          box.addEventListener('change', sync);
          boxes.push(box);
          return h(
            'div',
            { class: 'catalog-type' },
            h('label', { class: 'checkbox' }, box, h('code', null, t.name), t.deprecated ? h('span', { class: 'tag' }, 'deprecated') : null),
            h('p', { class: 'hint', id: `type-${t.name}-about` }, t.description),
            t.examples.length > 0 ? h('details', { class: 'example' }, h('summary', null, `Example payload${t.examples.length > 1 ? 's' : ''}`), t.examples.map((e) => h('pre', { class: 'json' }, JSON.stringify(e, null, 2)))) : null,
          );
        }),
      ),
    ),
  );
  return { element, selected: () => (all.checked ? ['*'] : boxes.filter((b) => b.checked).map((b) => b.value)) };
}

/**
 * The form as a customer sees it: URL, description, event types (from the catalog when there is
 * one), the policy choices the org offers, in words — no preset ids, no JSON — and the
 * receiver's own settings: request headers, auth and proxy, and a transformation.
 */
function customerForm(ctx, { editing, id, endpoint, picker, eventTypesInput }) {
  const field = (forId, label, control, hint) => h('div', { class: 'field' }, h('label', { for: forId }, label), control, hint ? h('p', { class: 'hint', id: `${forId}-hint` }, hint) : null);
  const url = h('input', { id: 'endpoint-url', name: 'url', type: 'url', required: true, value: endpoint?.url ?? '', placeholder: 'https://example.com/webhooks', autocomplete: 'off', spellcheck: 'false' });
  const description = h('input', { id: 'endpoint-description', name: 'description', value: endpoint?.description ?? '', maxlength: '500' });
  const choices = ctx.portal.policies;
  const current = endpoint?.policyName;
  const policy =
    choices.length > 1 || (editing && !choices.some((c) => c.name === current))
      ? h(
          'select',
          { id: 'endpoint-policy', name: 'policy' },
          editing && !choices.some((c) => c.name === current) ? h('option', { value: '', selected: true }, 'Keep the current retry rules') : null,
          choices.map((c) => h('option', { value: c.name, selected: c.name === current }, c.label)),
        )
      : null;
  const fields = ctx.portal.fields;
  const maxAttempts = fields.includes('maxAttempts') ? h('input', { id: 'endpoint-max-attempts', name: 'maxAttempts', type: 'number', min: '1', max: '100', inputmode: 'numeric', value: '' }) : null;
  const timeoutS = fields.includes('timeoutMs') ? h('input', { id: 'endpoint-timeout', name: 'timeoutS', type: 'number', min: '1', max: '120', inputmode: 'numeric', value: '' }) : null;
  // Headers, auth and proxy are the customer's own receiver's business: offered as in the console.
  const requestSettings = requestSettingsFields(endpoint);
  // So is reshaping what is sent: the transformation editor, as in the console.
  const transformation = transformationFields(ctx, endpoint, () => url.value.trim());
  const save = h('button', { type: 'submit', class: 'primary', id: 'save-endpoint' }, editing ? 'Save changes' : 'Create endpoint');
  const form = h(
    'form',
    {
      class: 'card form',
      onsubmit: async (e) => {
        e.preventDefault();
        let settings;
        try {
          settings = requestSettings.body();
        } catch (err) {
          ctx.notify(err.message, 'error');
          return;
        }
        const body = { url: url.value.trim(), description: description.value, eventTypes: picker ? picker.selected() : eventTypesInput.value.split(',').map((t) => t.trim()).filter(Boolean), ...settings, ...transformation.body() };
        if (body.eventTypes.length === 0) {
          ctx.notify('Pick at least one event type.', 'error');
          return;
        }
        const preset = policy ? policy.value : choices[0]?.name;
        const extra = {};
        if (maxAttempts?.value) extra.maxAttempts = Number(maxAttempts.value);
        if (timeoutS?.value) extra.timeout = { ms: Number(timeoutS.value) * 1000, measures: 'whole-response' };
        if (preset && (!editing || policy?.value || Object.keys(extra).length > 0)) body.policy = Object.keys(extra).length > 0 ? { preset, ...extra } : preset;
        save.setAttribute('aria-busy', 'true');
        try {
          const saved = editing ? await ctx.api.patch(`/v1/endpoints/${encodeURIComponent(id)}`, body) : await ctx.api.post('/v1/endpoints', body);
          ctx.navigate(`#/endpoints/${encodeURIComponent(saved.id)}`, [editing ? 'Endpoint saved.' : 'Endpoint created. Its signing secret can be revealed on its page whenever you need it.', 'ok']);
        } catch (err) {
          ctx.notify(err.sentence ?? 'Something went wrong; reload the page and try again.', 'error');
        } finally {
          save.removeAttribute('aria-busy');
        }
      },
    },
    field('endpoint-url', 'URL', url),
    field('endpoint-description', 'Description', description),
    picker ? picker.element : field('endpoint-event-types', 'Event types', eventTypesInput, 'Comma-separated, e.g. invoice.paid; * receives every type.'),
    requestSettings.element,
    transformation.element,
    policy ? field('endpoint-policy', 'Retries', policy, 'How long deliveries are retried when your endpoint does not answer with success.') : h('p', { class: 'hint', id: 'policy-words' }, `Retries: ${choices[0]?.label ?? 'as your provider set them'}.`),
    maxAttempts ? field('endpoint-max-attempts', 'Attempts at most (optional)', maxAttempts) : null,
    timeoutS ? field('endpoint-timeout', 'Seconds to wait for an answer (optional)', timeoutS) : null,
    h('div', { class: 'actions' }, save, h('a', { class: 'button', href: editing ? `#/endpoints/${encodeURIComponent(id)}` : '#/endpoints' }, 'Cancel')),
  );
  const title = editing ? 'Edit endpoint' : 'New endpoint';
  return h(
    'section',
    null,
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/endpoints' }, 'Endpoints'), ' › ', h('span', { 'aria-current': 'page' }, title)),
    h('h1', null, title),
    form,
    editing
      ? h(
          'div',
          { class: 'card' },
          deleteButton(ctx, endpoint, id),
        )
      : null,
  );
}

/** The endpoint form's Delete button (console and portal alike): confirms, deletes, back to the list. */
function deleteButton(ctx, endpoint, id) {
  return actionButton(ctx, {
    id: 'delete-endpoint',
    label: 'Delete endpoint',
    className: 'danger',
    confirmText: `Delete ${endpoint.url}? Queued deliveries to it are cancelled.`,
    run: () => ctx.api.del(`/v1/endpoints/${encodeURIComponent(id)}`),
    done: () => ctx.navigate('#/endpoints', ['Endpoint deleted.', 'ok']),
  });
}
