/**
 * Starting points for an endpoint's transformation (`GET /v1/transformations/templates`): each
 * reshapes Postern's request for one kind of receiver, with a sample event to try it on. Each is
 * tested on its sample against the target's documented format (packages/sandbox/src/templates.test.ts).
 */

/** One template: an id, what it is for, its code and an event to try it on. */
export interface TransformationTemplate {
  /** Stable, kebab-case, e.g. `slack`. */
  id: string;
  name: string;
  description: string;
  /** The documentation of the target's format the template follows (empty for generic ones). */
  reference: string;
  code: string;
  sample: { eventType: string; payload: unknown };
}

const invoiceSample = {
  eventType: 'invoice.paid',
  payload: { id: 'in_1042', customer: { id: 'cus_77', name: 'Ada Lovelace', email: 'ada@example.com' }, amount: 4200, currency: 'EUR', status: 'paid', lines: [{ description: 'Pro plan', amount: 4200 }] },
};

/** A line of text that says what happened, shared by the chat templates. */
const SUMMARY = `function summary(webhook) {
  const p = webhook.payload || {};
  const who = p.customer && p.customer.name ? ' for ' + p.customer.name : '';
  const amount = typeof p.amount === 'number' ? ' (' + (p.amount / 100).toFixed(2) + ' ' + (p.currency || '') + ')' : '';
  return webhook.eventType + who + amount;
}`;

/** Every template, in the order the console lists them. */
export const TRANSFORMATION_TEMPLATES: readonly TransformationTemplate[] = Object.freeze([
  {
    id: 'slack',
    name: 'Slack incoming webhook',
    description: 'Posts a message to a Slack channel through an incoming webhook URL: `text` as the fallback and a Block Kit section.',
    reference: 'https://api.slack.com/messaging/webhooks',
    code: `${SUMMARY}

function handler(webhook) {
  const text = summary(webhook);
  webhook.payload = {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: '*' + webhook.eventType + '*\\n' + text } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'Event ' + webhook.eventId }] },
    ],
  };
  return webhook;
}
`,
    sample: invoiceSample,
  },
  {
    id: 'discord',
    name: 'Discord webhook',
    description: 'Posts a message with one embed to a Discord channel webhook (`content` up to 2000 characters).',
    reference: 'https://discord.com/developers/docs/resources/webhook#execute-webhook',
    code: `${SUMMARY}

function handler(webhook) {
  webhook.payload = {
    content: summary(webhook).slice(0, 2000),
    embeds: [
      {
        title: webhook.eventType.slice(0, 256),
        description: JSON.stringify(webhook.payload, null, 2).slice(0, 4000),
        timestamp: webhook.timestamp,
        footer: { text: webhook.eventId },
      },
    ],
  };
  return webhook;
}
`,
    sample: invoiceSample,
  },
  {
    id: 'teams-adaptive-card',
    name: 'Microsoft Teams (Adaptive Card)',
    description: 'Posts an Adaptive Card to a Teams channel through a Workflows (or incoming) webhook: a `message` with one `application/vnd.microsoft.card.adaptive` attachment.',
    reference: 'https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook',
    code: `${SUMMARY}

function handler(webhook) {
  const p = webhook.payload || {};
  const facts = Object.keys(p)
    .filter((k) => p[k] === null || typeof p[k] !== 'object')
    .slice(0, 10)
    .map((k) => ({ title: k, value: String(p[k]) }));
  webhook.payload = {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', size: 'Medium', weight: 'Bolder', text: webhook.eventType },
            { type: 'TextBlock', text: summary(webhook), wrap: true },
            { type: 'FactSet', facts },
          ],
        },
      },
    ],
  };
  return webhook;
}
`,
    sample: invoiceSample,
  },
  {
    id: 'google-chat',
    name: 'Google Chat',
    description: 'Posts a text message to a Google Chat space through its incoming webhook URL.',
    reference: 'https://developers.google.com/workspace/chat/quickstart/webhooks',
    code: `${SUMMARY}

function handler(webhook) {
  webhook.payload = { text: '*' + webhook.eventType + '*\\n' + summary(webhook) };
  webhook.headers['content-type'] = 'application/json; charset=UTF-8';
  return webhook;
}
`,
    sample: invoiceSample,
  },
  {
    id: 'form-encoded',
    name: 'Form-encoded fields',
    description: 'Sends the payload\'s top-level fields as `application/x-www-form-urlencoded` (nested values as JSON), for receivers that read HTML forms.',
    reference: 'https://url.spec.whatwg.org/#application/x-www-form-urlencoded',
    code: `function handler(webhook) {
  const p = webhook.payload || {};
  const fields = [['event_type', webhook.eventType], ['event_id', webhook.eventId]];
  for (const key of Object.keys(p)) {
    const value = p[key];
    fields.push([key, value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)]);
  }
  webhook.body = fields.map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v)).join('&').replace(/%20/g, '+');
  webhook.contentType = 'application/x-www-form-urlencoded';
  return webhook;
}
`,
    sample: invoiceSample,
  },
  {
    id: 'pick-fields',
    name: 'Pick fields',
    description: 'Sends only the fields listed in `FIELDS` (dotted paths into the payload), with the event type and id.',
    reference: '',
    code: `const FIELDS = ['id', 'amount', 'currency', 'customer.id'];

function pick(value, path) {
  return path.split('.').reduce((v, key) => (v !== null && typeof v === 'object' ? v[key] : undefined), value);
}

function handler(webhook) {
  const picked = {};
  for (const path of FIELDS) {
    const value = pick(webhook.payload, path);
    if (value !== undefined) picked[path] = value;
  }
  webhook.payload = { type: webhook.eventType, id: webhook.eventId, data: picked };
  return webhook;
}
`,
    sample: invoiceSample,
  },
  {
    id: 'drop-events',
    name: 'Drop events matching a condition',
    description: 'Cancels deliveries whose event matches `drop(webhook)` (here: test events, and amounts under 1.00); every other event is sent unchanged in the standard envelope.',
    reference: '',
    code: `function drop(webhook) {
  const p = webhook.payload || {};
  return webhook.eventType === 'webhook.test' || (typeof p.amount === 'number' && p.amount < 100);
}

function handler(webhook) {
  if (drop(webhook)) {
    webhook.cancel = true;
    return webhook;
  }
  webhook.payload = { id: webhook.eventId, type: webhook.eventType, timestamp: webhook.timestamp, data: webhook.payload };
  return webhook;
}
`,
    sample: { eventType: 'invoice.paid', payload: { id: 'in_1043', amount: 50, currency: 'EUR' } },
  },
] satisfies TransformationTemplate[]);
