import { TRANSFORMATION_TEMPLATES } from '@postern/shared';
import type { RouteReference } from './route-reference.js';

/** Transformations: the templates and a test run. */
export const TRANSFORMATION_DOCS: Record<string, RouteReference> = {
  'get /v1/transformations/templates': {
    description:
      "Ready-made transformations to start from: Slack, Discord, Microsoft Teams (Adaptive Card), Google Chat, a form-encoded body, a subset of fields, dropping events by a condition. Each has its JavaScript `code`, a link to the receiving service's documentation where there is one, and a sample event to try it on with `POST /v1/transformations/test`.",
    responses: { 200: { data: TRANSFORMATION_TEMPLATES.filter((t) => t.id === 'drop-events') } },
  },
  'post /v1/transformations/test': {
    description: [
      'Runs transformation code on a sample event (`{code, eventType, payload}`) or on one of the org\'s stored events (`{code, eventId}`) in the same sandbox and under the same limits as a delivery, and answers with the request it would make: method, URL (`url`, default a placeholder), headers and body, or `{cancel: true}` where the code drops the event. Nothing is sent and nothing is stored, so a URL the code sets is not checked against the address rules here: a delivery to a private or internal address still fails with `transformation_failed:unsafe_url`.',
      '',
      "Code refused before it runs is 400 (`transformation_syntax_error` with `line`, `transformation_handler_missing`, `transformation_too_large`, `transformation_invalid`); code that fails while running answers 200 with `result: null` and `error` (`transformation_failed:<reason>`), with whatever it logged. A stored event whose data was erased is 409 `data_erased`.",
    ].join('\n'),
    request: { code: 'function handler(webhook) { webhook.payload = { text: webhook.eventType }; return webhook; }', eventType: 'invoice.paid', payload: { amount: 4200 } },
    responses: {
      200: {
        result: { cancel: false, method: 'POST', url: 'https://receiver.example/webhook', headers: { 'content-type': 'application/json' }, body: '{"text":"invoice.paid"}' },
        error: null,
        logs: [],
        durationMs: 7.619,
      },
    },
  },
};
