// The endpoint form's transformation section (docs/transformations.md): an editor with line
// numbers, a template picker, an on/off switch, and "Test on a sample", which shows the request
// the code would make (POST /v1/transformations/test; nothing is sent).
import { h } from '../dom.js';

/** Keeps the line-number gutter in step with the textarea's lines and scroll. */
function lineNumbered(textarea) {
  const gutter = h('pre', { class: 'line-numbers', 'aria-hidden': 'true' });
  const sync = () => {
    const lines = textarea.value.split('\n').length;
    gutter.textContent = Array.from({ length: lines }, (_, i) => String(i + 1)).join('\n');
    gutter.scrollTop = textarea.scrollTop;
  };
  textarea.addEventListener('input', sync);
  textarea.addEventListener('scroll', () => {
    gutter.scrollTop = textarea.scrollTop;
  });
  sync();
  return { element: h('div', { class: 'code-editor' }, gutter, textarea), sync };
}

/**
 * The section for `endpoint` (null when creating), `urlOf()` the URL the form holds now:
 * `{element, body()}`; `body()` is the
 * `transformation` field to send (`{}` when nothing changed, `{transformation: null}` to remove it).
 */
export function transformationFields(ctx, endpoint, urlOf) {
  const current = endpoint?.transformation ?? null;
  const enabled = h('input', { type: 'checkbox', id: 'transformation-enabled', checked: current ? current.enabled : true });
  const code = h('textarea', { id: 'transformation-code', rows: '14', spellcheck: 'false', wrap: 'off', placeholder: 'function handler(webhook) {\n  // webhook = {eventType, eventId, timestamp, payload, method, url, headers}\n  return webhook;\n}', 'aria-describedby': 'transformation-code-hint' });
  code.value = current?.code ?? '';
  const editor = lineNumbered(code);
  const templates = h('select', { id: 'transformation-template', 'aria-label': 'Template' }, h('option', { value: '' }, 'Start from a template…'));
  const sampleType = h('input', { id: 'transformation-sample-type', value: 'invoice.paid', spellcheck: 'false' });
  const samplePayload = h('textarea', { id: 'transformation-sample-payload', rows: '4', spellcheck: 'false' });
  samplePayload.value = '{"amount": 4200, "currency": "EUR", "customer": {"name": "Ada Lovelace"}}';
  const output = h('div', { id: 'transformation-test-output', 'aria-live': 'polite' });
  let list = [];

  void ctx.api.get('/v1/transformations/templates').then((r) => {
    list = r.data;
    for (const t of list) templates.append(h('option', { value: t.id }, t.name));
  }, () => {});
  templates.addEventListener('change', () => {
    const t = list.find((x) => x.id === templates.value);
    if (!t) return;
    code.value = t.code;
    sampleType.value = t.sample.eventType;
    samplePayload.value = JSON.stringify(t.sample.payload, null, 2);
    editor.sync();
    output.replaceChildren(h('p', { class: 'hint' }, t.description));
  });

  async function test() {
    let payload;
    try {
      payload = JSON.parse(samplePayload.value);
    } catch {
      output.replaceChildren(h('p', { class: 'error-box', role: 'alert' }, 'The sample payload must be JSON.'));
      return;
    }
    try {
      // The URL in the form (or the endpoint's) is what the handler sees; nothing is sent to it.
      const url = urlOf() || endpoint?.url;
      const r = await ctx.api.post('/v1/transformations/test', { code: code.value, eventType: sampleType.value.trim(), payload, ...(url ? { url } : {}) });
      const logs = r.logs.length > 0 ? [h('h3', null, 'console.log'), h('pre', { id: 'transformation-test-logs' }, r.logs.join('\n'))] : [];
      if (r.error) {
        output.replaceChildren(h('p', { class: 'error-box', role: 'alert', id: 'transformation-test-error' }, `${r.error.code}${r.error.line ? ` (line ${r.error.line})` : ''}: ${r.error.message}`), ...logs);
      } else if (r.result.cancel) {
        output.replaceChildren(h('p', { id: 'transformation-test-result' }, 'Cancelled: this event would not be sent (transformation:cancel).'), ...logs);
      } else {
        const headers = Object.entries(r.result.headers).map(([k, v]) => `${k}: ${v}`).join('\n');
        output.replaceChildren(
          h('p', null, `Would send in ${r.durationMs} ms (Postern adds its webhook-* headers and signs this body):`),
          h('pre', { id: 'transformation-test-result' }, `${r.result.method} ${r.result.url}\n${headers}\n\n${r.result.body}`),
          ...logs,
        );
      }
    } catch (err) {
      output.replaceChildren(h('p', { class: 'error-box', role: 'alert', id: 'transformation-test-error' }, err.sentence ?? 'The test could not run.'));
    }
  }

  const element = h(
    'fieldset',
    { class: 'transformation', id: 'transformation-section' },
    h('legend', null, 'Transformation'),
    h('p', { class: 'hint', id: 'transformation-code-hint' }, 'JavaScript defining function handler(webhook) that reshapes each request before it is signed and sent: payload (or body and contentType), method, url, headers, or cancel: true. It runs in a sandbox: no I/O, a fixed clock, capped time and memory.', current ? ` Version ${current.version}.` : ''),
    h('div', { class: 'field inline' }, enabled, h('label', { for: 'transformation-enabled' }, 'Run the transformation on every attempt')),
    h('div', { class: 'field' }, templates),
    h('div', { class: 'field' }, h('label', { for: 'transformation-code' }, 'Code'), editor.element),
    h('details', { id: 'transformation-test' },
      h('summary', null, 'Test on a sample'),
      h('div', { class: 'field' }, h('label', { for: 'transformation-sample-type' }, 'Event type'), sampleType),
      h('div', { class: 'field' }, h('label', { for: 'transformation-sample-payload' }, 'Payload (JSON)'), samplePayload),
      h('button', { type: 'button', id: 'transformation-run-test', onclick: () => void test() }, 'Run test'),
      output,
    ),
  );

  return {
    element,
    /** The field to send: unchanged → {}, emptied → removal, else the code and the switch. */
    body() {
      const text = code.value;
      if (text.trim() === '') return current ? { transformation: null } : {};
      if (current && current.code === text && current.enabled === enabled.checked) return {};
      return { transformation: { code: text, enabled: enabled.checked } };
    },
  };
}
