import { compareStreamIds, isLiveEventTypeFilter, matchesLiveFilter, mayOpenStream, resumeFrom, type LiveDeliveryChange } from './live-deliveries.js';

const change: LiveDeliveryChange = {
  deliveryId: 'dlv_1', endpointId: 'ep_1', eventId: 'evt_1', eventType: 'invoice.paid', status: 'succeeded',
  attempt: 1, responseStatus: 200, error: null, durationMs: 12, nextAttemptAt: null, at: 1_000,
};

describe('matchesLiveFilter', () => {
  it('passes everything without a filter', () => expect(matchesLiveFilter(change, {})).toBe(true));
  it('checks every given field', () => {
    expect(matchesLiveFilter(change, { endpointId: 'ep_1', status: 'succeeded', eventType: 'invoice.paid' })).toBe(true);
    expect(matchesLiveFilter(change, { endpointId: 'ep_2' })).toBe(false);
    expect(matchesLiveFilter(change, { status: 'failed' })).toBe(false);
    expect(matchesLiveFilter(change, { eventType: 'invoice.failed' })).toBe(false);
  });
  it('takes prefix.* and * for the event type', () => {
    expect(matchesLiveFilter(change, { eventType: 'invoice.*' })).toBe(true);
    expect(matchesLiveFilter(change, { eventType: 'inv.*' })).toBe(false);
    expect(matchesLiveFilter(change, { eventType: '*' })).toBe(true);
  });
});

describe('isLiveEventTypeFilter', () => {
  test('an exact type, a prefix.* group or * can match; other wildcards never can', () => {
    for (const ok of ['*', 'invoice.*', 'invoice.line.*', 'invoice.paid', 'a:b-c_d']) expect(isLiveEventTypeFilter(ok)).toBe(true);
    for (const never of ['', 'invoice*', '*.paid', 'invoice.*.paid', 'inv?ice', '.*', '**', 'a b']) expect(isLiveEventTypeFilter(never)).toBe(false);
  });
  test('every filter it accepts matches some type', () => {
    expect(matchesLiveFilter({ ...change, eventType: 'invoice.line.added' }, { eventType: 'invoice.line.*' })).toBe(true);
  });
});

describe('compareStreamIds', () => {
  it('orders by time, then sequence, numerically', () => {
    expect(compareStreamIds('9-0', '10-0')).toBeLessThan(0);
    expect(compareStreamIds('10-2', '10-10')).toBeLessThan(0);
    expect(compareStreamIds('10-2', '10-2')).toBe(0);
    expect(compareStreamIds('1700000000001-0', '1700000000000-5')).toBeGreaterThan(0);
  });
});

describe('resumeFrom', () => {
  it('replays when the id is within what is kept, or nothing is kept', () => {
    expect(resumeFrom('10-0', '9-0')).toBe('replay');
    expect(resumeFrom('10-0', '10-0')).toBe('replay');
    expect(resumeFrom('10-0', null)).toBe('replay');
  });
  it('reports a gap when entries after the id were trimmed', () => expect(resumeFrom('5-0', '9-0')).toBe('gap'));
});

describe('mayOpenStream', () => {
  it('allows up to the limit', () => {
    expect(mayOpenStream(4, 5)).toBe(true);
    expect(mayOpenStream(5, 5)).toBe(false);
    expect(mayOpenStream(0, 0)).toBe(false);
  });
});
