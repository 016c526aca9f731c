// The org's API keys: list (prefix only), create (shown once), revoke.
import { actionButton } from '../actions.js';
import { h, table } from '../dom.js';
import { time } from '../format.js';

const SCOPES = [
  ['events:write', 'post events'],
  ['webhooks:read', 'see endpoints, deliveries, events, notifications'],
  ['webhooks:write', 'change endpoints, redeliver, rotate secrets, manage keys'],
];

// A new key is shown once, on the visit that created it.
let created = null;

function createForm(ctx) {
  const name = h('input', { id: 'key-name', name: 'name', required: true, maxlength: '100', autocomplete: 'off' });
  const boxes = SCOPES.filter(([scope]) => ctx.me.scopes.includes(scope)).map(([scope, what]) =>
    h('label', { class: 'checkbox' }, h('input', { type: 'checkbox', name: 'scopes', value: scope, checked: scope === 'webhooks:read' }), h('span', null, h('code', null, scope), ` — ${what}`)),
  );
  const submit = h('button', { type: 'submit', class: 'primary', id: 'create-key' }, 'Create key');
  return h(
    'form',
    {
      class: 'card',
      onsubmit: async (e) => {
        e.preventDefault();
        const scopes = boxes.map((b) => b.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
        if (scopes.length === 0) return ctx.notify('Choose at least one scope for the new key.', 'error');
        submit.disabled = true;
        try {
          const key = await ctx.api.post('/v1/api-keys', { name: name.value, scopes });
          created = { visit: ctx.visit, key };
          ctx.notify(`API key “${key.name}” created; copy it now.`);
          await ctx.reload();
        } catch (err) {
          ctx.notify(err.sentence, 'error');
          submit.disabled = false;
        }
      },
    },
    h('h2', null, 'Create a key'),
    h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'Name'), name, h('p', { class: 'hint' }, 'Who or what uses it, e.g. “billing service” or “support read-only”.')),
    h('fieldset', null, h('legend', null, 'Scopes'), boxes, h('p', { class: 'hint' }, 'A key can only grant scopes it holds itself.')),
    submit,
  );
}

/** `#/api-keys` */
export async function apiKeysView(ctx) {
  const page = await ctx.api.get('/v1/api-keys?limit=100');
  const columns = ['Name', 'Key', 'Scopes', 'Created', 'Revoked'];
  if (ctx.canWrite) columns.push('Action');
  const rows = page.data.map((k) => ({
    className: k.revokedAt ? 'row--disabled' : undefined,
    cells: [
      [k.name, k.id === ctx.me.keyId ? h('span', { class: 'tag' }, 'this key') : null],
      h('code', null, `pk_${k.prefix}…`),
      k.scopes.join(', '),
      time(k.createdAt),
      k.revokedAt ? time(k.revokedAt) : 'active',
      ctx.canWrite
        ? k.revokedAt
          ? '—'
          : actionButton(ctx, {
              id: `revoke-${k.id}`,
              label: 'Revoke',
              className: 'danger',
              confirmText: `Revoke “${k.name}” (pk_${k.prefix}…)? Requests with it are refused at once.`,
              run: () => ctx.api.del(`/v1/api-keys/${encodeURIComponent(k.id)}`),
              done: () => {
                ctx.notify(`Key “${k.name}” revoked.`);
                return ctx.reload();
              },
            })
        : null,
    ].slice(0, columns.length),
  }));
  const justCreated = created && created.visit === ctx.visit ? created.key : null;
  return h(
    'section',
    null,
    h('h1', null, 'API keys'),
    h('p', { class: 'subtitle' }, 'Keys of your organisation. Only the first characters of each are kept for display; a key is shown in full once, when it is created.'),
    justCreated
      ? h('div', { class: 'secret-box', id: 'new-key' }, h('strong', null, `New key “${justCreated.name}” — copy it now, it is not shown again:`), h('code', null, justCreated.apiKey))
      : null,
    table('API keys', columns, rows),
    ctx.canWrite ? createForm(ctx) : null,
  );
}
