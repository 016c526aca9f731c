// Building DOM without innerHTML: every value from the API becomes a text node, so data can never
// turn into markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttributes(el, attrs) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.setAttribute('class', value);
    else if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

function appendChildren(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An HTML element: `h('a', {href: '#/x'}, 'text', otherNode)`. Falsy attributes and children are skipped. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttributes(el, attrs);
  appendChildren(el, children);
  return el;
}

/** An SVG element, same call shape as {@link h}. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttributes(el, attrs);
  appendChildren(el, children);
  return el;
}

/**
 * A `<table class="stack">` whose cells carry their column name, so phones show one labelled card
 * per row. `rows` are `{cells, className?}`; `className` is added to the table.
 */
export function table(caption, columns, rows, className = '') {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: `stack ${className}`.trim() },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', null, h('tr', null, columns.map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            { class: row.className },
            // One wrapper per cell: on phones each cell is a two-column grid, label and content.
            row.cells.map((cell, i) => h('td', { 'data-label': columns[i], class: cell?.numeric ? 'num' : undefined }, h('div', null, cell?.numeric ? cell.value : cell))),
          ),
        ),
      ),
    ),
  );
}

/** A cell whose digits line up. */
export function num(value) {
  return { numeric: true, value: value ?? '—' };
}

/**
 * A definition list of facts: `[[label, value, wide?], …]` (null entries skipped); empty values show as an em dash, a
 * `wide` fact (a long id) takes two columns.
 */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.filter(Boolean).map(([label, value, wide]) => h('div', { class: wide ? 'wide' : undefined }, h('dt', null, label), h('dd', null, value === null || value === undefined || value === '' ? '—' : value))),
  );
}

/** A status badge; the word is always shown, the colour only helps. */
export function badge(status, label = status) {
  // Glyphs every common sans-serif font has (DejaVu included), so none renders as a box.
  const icons = { succeeded: '✓', active: '●', failed: '✕', disabled: '⊘', paused: '‖', pending: '…', in_flight: '→', cancelled: '–', held: '‖' };
  return h('span', { class: `badge badge--${status}` }, h('span', { 'aria-hidden': 'true' }, icons[status] ?? ''), label.replace('_', ' '));
}
