// The exact bytes of an event's envelope as every delivery sent them; pretty-printing is an option.
import { h } from '../dom.js';

/** A card showing `envelope` verbatim, with a toggle to pretty-print it (the raw bytes stay the default). */
export function envelopeBlock(envelope) {
  const pre = h('pre', { class: 'json', id: 'envelope', tabindex: '0', 'aria-label': 'Request body' }, envelope);
  let pretty = false;
  const toggle = h(
    'button',
    {
      type: 'button',
      id: 'toggle-pretty',
      'aria-pressed': 'false',
      onclick: () => {
        pretty = !pretty;
        let text = envelope;
        if (pretty) {
          try {
            text = JSON.stringify(JSON.parse(envelope), null, 2);
          } catch {
            text = envelope;
          }
        }
        pre.textContent = text;
        toggle.setAttribute('aria-pressed', String(pretty));
        toggle.textContent = pretty ? 'Show exact bytes' : 'Pretty-print';
      },
    },
    'Pretty-print',
  );
  return h(
    'div',
    { class: 'card' },
    h('div', { class: 'card-head' }, h('p', { class: 'hint', id: 'envelope-label' }, `The request body, exactly as sent (${new TextEncoder().encode(envelope).length} bytes). Pretty-printing shows numbers as JavaScript reads them.`), toggle),
    pre,
  );
}
