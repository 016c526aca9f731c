/**
 * What checking an event against its catalog schema costs ingest, in process: the ajv validator
 * (compiled once per type version, then cached) plus the decision, per event, for a valid and an
 * invalid payload of a realistic invoice schema, and the one-off compile. Reading the type's entry
 * adds one Redis `HGET` per event for orgs that validate (none for orgs that do not).
 * Alone: `npm run bench:validation`; `npm run bench` prints it too.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { decideEventValidation, type EventTypeDefinition } from '@postern/shared';
import { EventValidators } from '@postern/ingest';

/** The figures {@link measureEventValidation} reports. */
export interface EventValidationCost {
  events: number;
  /** µs per event, validator cached, data valid. */
  validUs: number;
  /** µs per event, validator cached, data with three issues. */
  invalidUs: number;
  /** ms for the first event of a type version (compile). */
  compileMs: number;
  /** µs per event to parse the `data` JSON the check needs (ingest has it parsed already; shown for scale). */
  parseUs: number;
}

const schema = {
  type: 'object',
  required: ['invoiceId', 'customer', 'amountCents', 'currency', 'lines'],
  additionalProperties: false,
  properties: {
    invoiceId: { type: 'string', pattern: '^in_[0-9A-Za-z]+$' },
    customer: { type: 'object', required: ['id', 'email'], properties: { id: { type: 'string' }, email: { type: 'string', format: 'email' } } },
    amountCents: { type: 'integer', minimum: 0 },
    currency: { enum: ['EUR', 'USD', 'GBP'] },
    lines: { type: 'array', maxItems: 100, items: { type: 'object', required: ['sku', 'quantity'], properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } } } },
  },
};
const valid = { invoiceId: 'in_1042', customer: { id: 'cus_1', email: 'a@example.com' }, amountCents: 4200, currency: 'EUR', lines: Array.from({ length: 5 }, (_, i) => ({ sku: `sku_${i}`, quantity: i + 1 })) };
const invalid = { ...valid, amountCents: 1.5, currency: 'JPY', colour: 'red' };
const settings = { eventValidation: 'reject' as const, requireKnownEventTypes: false };

function perEventUs(events: number, fn: () => void): number {
  for (let i = 0; i < Math.min(2000, events); i++) fn();
  const start = performance.now();
  for (let i = 0; i < events; i++) fn();
  return ((performance.now() - start) * 1000) / events;
}

/** Times `events` checks of each kind (default 50 000: well under a second each). */
export function measureEventValidation(events = 50_000): EventValidationCost {
  const validators = new EventValidators();
  const definition: EventTypeDefinition = { name: 'invoice.paid', description: 'x', group: null, schema: structuredClone(schema), examples: [], deprecated: false, archived: false, version: 1, createdAt: 0, updatedAt: 0 };
  // The process's first compile also sets ajv itself up; a later version's compile is the steady cost.
  validators.check('org_bench', { ...definition, version: 0, schema: structuredClone(schema) }, valid);
  const compileStart = performance.now();
  validators.check('org_bench', definition, valid);
  const compileMs = performance.now() - compileStart;
  const check = (data: unknown) => () => {
    const issues = validators.check('org_bench', definition, data);
    decideEventValidation({ type: definition.name, settings, definition, issues });
  };
  const text = JSON.stringify(valid);
  return {
    events,
    validUs: perEventUs(events, check(valid)),
    invalidUs: perEventUs(events, check(invalid)),
    compileMs,
    parseUs: perEventUs(events, () => JSON.parse(text)),
  };
}

/** One line for the report. */
export function eventValidationLine(c: EventValidationCost): string {
  const f = (n: number) => n.toFixed(2);
  return `Event validation (ajv 2020-12, cached per type version; ${c.events} events each, in process): valid ${f(c.validUs)} µs/event, invalid (3 issues) ${f(c.invalidUs)} µs/event, first event of a new type version (compile, after the process's first) ${f(c.compileMs)} ms; JSON.parse of the data ${f(c.parseUs)} µs for scale; +1 Redis HGET per event for orgs that validate`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(eventValidationLine(measureEventValidation()));
}
