import { API_KEY_SCOPES, eventTypeFilterSchema, eventTypeSchema } from '@postern/shared';
import { DELIVERY_STATUSES } from '@postern/store';
import { z } from 'zod';

/** `POST /v1/orgs` body. The name is trimmed; control characters (U+0000–U+001F, U+007F) are refused. */
export const createOrgBody = z.strictObject({
  name: z
    .string({ error: 'name must be a string of 1 to 200 characters' })
    .regex(/^[^\u0000-\u001f\u007f]*$/, 'name must not contain control characters')
    .trim()
    .min(1, 'name must be a string of 1 to 200 characters')
    .max(200, 'name must be a string of 1 to 200 characters'),
});

const urlField = z.string({ error: 'url must be a string' }).max(2048, 'url must be at most 2048 characters');
const descriptionField = z
  .string({ error: 'description must be a string' })
  .max(500, 'description must be at most 500 characters')
  .regex(/^[^\u0000-\u0008\u000b-\u001f\u007f]*$/, 'description must not contain control characters other than newline and tab');

/** `POST /v1/endpoints` body. `policy` is checked separately by `resolvePolicy`. */
export const createEndpointBody = z.strictObject({
  url: urlField,
  eventTypes: eventTypeFilterSchema.optional(),
  policy: z.unknown().optional(),
  description: descriptionField.optional(),
  secret: z.string({ error: 'secret must be a string' }).optional(),
});

/** `PATCH /v1/endpoints/:id` body: any subset of the endpoint's settable fields. */
export const updateEndpointBody = z.strictObject({
  url: urlField.optional(),
  eventTypes: eventTypeFilterSchema.optional(),
  policy: z.unknown().optional(),
  description: descriptionField.optional(),
});

/** `POST /v1/events` body. `data` is any JSON value and is kept byte for byte. */
export const createEventBody = z.strictObject({
  type: eventTypeSchema,
  data: z.unknown().refine((v) => v !== undefined, 'data is required (any JSON value)'),
  idempotencyKey: z.string({ error: 'idempotencyKey must be a string' }).min(1, 'idempotencyKey must be 1 to 200 characters').max(200, 'idempotencyKey must be 1 to 200 characters').optional(),
});

/** Paging query: `limit` 1..100 (default 50), `cursor` the last id of the previous page. */
export const pageQuery = z.object({
  limit: z.coerce.number({ error: 'limit must be an integer from 1 to 100' }).int('limit must be an integer from 1 to 100').min(1, 'limit must be an integer from 1 to 100').max(100, 'limit must be an integer from 1 to 100').default(50),
  cursor: z.string().regex(/^[a-z]+_[0-9A-Za-z]+$/, 'cursor must be an id from a previous page').optional(),
});

/** `GET /v1/endpoints/:id/deliveries` query. */
export const deliveryListQuery = pageQuery.extend({
  status: z.enum(DELIVERY_STATUSES as [string, ...string[]], { error: `status must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});

const SCOPES_MESSAGE = `scopes must be a non-empty list of ${API_KEY_SCOPES.join(', ')}`;

/** `POST /v1/api-keys` body: a name for people and the scopes the key holds. */
export const createApiKeyBody = z.strictObject({
  name: z.string({ error: 'name must be a string of 1 to 100 characters' }).trim().min(1, 'name must be a string of 1 to 100 characters').max(100, 'name must be a string of 1 to 100 characters'),
  scopes: z
    .array(z.enum(API_KEY_SCOPES as [string, ...string[]], { error: SCOPES_MESSAGE }), { error: SCOPES_MESSAGE })
    .min(1, SCOPES_MESSAGE)
    .transform((scopes) => API_KEY_SCOPES.filter((s) => scopes.includes(s))),
});
