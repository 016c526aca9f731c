import { DEFAULT_EVENT_TYPE_FILTER, eventTypeFilterSchema, eventTypeSchema, matchesEventTypes } from './event-types.js';

describe('eventTypeSchema', () => {
  it.each(['invoice.paid', 'a', 'webhook.test', 'A1_b-c:d.e', '9lives', 'x'.repeat(200)])('accepts %s', (type) => {
    expect(eventTypeSchema.safeParse(type).success).toBe(true);
  });

  it.each(['', '.invoice', '-x', '_x', 'invoice paid', 'invoice/paid', 'é', '*', 'x'.repeat(201)])('refuses %j', (type) => {
    const result = eventTypeSchema.safeParse(type);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain('1 to 200 characters');
  });

  it('refuses a non-string', () => {
    expect(eventTypeSchema.safeParse(5).success).toBe(false);
  });
});

describe('eventTypeFilterSchema', () => {
  it('accepts types and *, up to 100 entries', () => {
    expect(eventTypeFilterSchema.safeParse(['*']).success).toBe(true);
    expect(eventTypeFilterSchema.safeParse(['invoice.paid', 'invoice.voided']).success).toBe(true);
    expect(eventTypeFilterSchema.safeParse(Array(101).fill('a')).success).toBe(false);
    expect(eventTypeFilterSchema.safeParse(['invoice.*']).success).toBe(false);
    expect(eventTypeFilterSchema.safeParse('*').success).toBe(false);
  });

  it('drops duplicates, keeping the order of first occurrences', () => {
    expect(eventTypeFilterSchema.parse(['b.x', 'a.x', 'b.x', '*', 'a.x', '*'])).toEqual(['b.x', 'a.x', '*']);
  });

  it('refuses an empty list, which would subscribe to nothing, silently', () => {
    const result = eventTypeFilterSchema.safeParse([]);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('eventTypes must list at least one event type, or ["*"] for every type');
  });
});

describe('matchesEventTypes', () => {
  it('matches exact names, case-sensitively', () => {
    expect(matchesEventTypes(['invoice.paid', 'invoice.voided'], 'invoice.paid')).toBe(true);
    expect(matchesEventTypes(['invoice.paid'], 'invoice.voided')).toBe(false);
    expect(matchesEventTypes(['invoice.paid'], 'Invoice.paid')).toBe(false);
    expect(matchesEventTypes(['invoice'], 'invoice.paid')).toBe(false);
  });

  it('matches anything with *, including the default filter', () => {
    expect(matchesEventTypes(['*'], 'anything.at_all')).toBe(true);
    expect(matchesEventTypes(['invoice.paid', '*'], 'user.created')).toBe(true);
    expect(matchesEventTypes(DEFAULT_EVENT_TYPE_FILTER, 'user.created')).toBe(true);
  });

  it('matches nothing with an empty filter', () => {
    expect(matchesEventTypes([], 'invoice.paid')).toBe(false);
  });
});
