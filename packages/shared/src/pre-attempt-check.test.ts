import { buildEnvelope } from './envelope.js';
import { planBeforeAttempt } from './attempt-plan.js';
import {
  MAX_CHECK_ANSWER_BYTES,
  checkRequestBody,
  disabledEventTypesSchema,
  envelopeWithData,
  isEventTypeDisabled,
  planAttemptBody,
  planFromCheckAnswer,
  shouldAskCheck,
  type CheckResponse,
} from './pre-attempt-check.js';
import { PRESETS } from './presets.js';
import { resolvePolicy } from './policy.js';

const envelope = buildEnvelope({ id: 'evt_1', type: 'time.logged', timestampMs: Date.UTC(2026, 0, 2, 3, 4, 5), dataJson: '{"hours": 1.0}' });
const ok = (body: string, status = 200): CheckResponse => ({ kind: 'response', status, body, bodyTruncated: false });
const plan = (response: CheckResponse, bodyOpen = true) => planFromCheckAnswer(response, { envelope, bodyOpen });

describe('event-type switches', () => {
  test('an exact type or a prefix.* group switches a type off; a group never matches its bare prefix', () => {
    expect(isEventTypeDisabled(['expense.*'], 'expense.created')).toBe(true);
    expect(isEventTypeDisabled(['expense.*'], 'expense.report.filed')).toBe(true);
    expect(isEventTypeDisabled(['expense.*'], 'expense')).toBe(false);
    expect(isEventTypeDisabled(['expense.*'], 'expenses.created')).toBe(false);
    expect(isEventTypeDisabled(['time.logged'], 'time.logged')).toBe(true);
    expect(isEventTypeDisabled(['time.logged'], 'time.logged.late')).toBe(false);
    expect(isEventTypeDisabled([], 'a')).toBe(false);
    expect(isEventTypeDisabled(undefined, 'a')).toBe(false);
  });

  test('the schema takes types and groups, drops duplicates, refuses * and malformed entries', () => {
    expect(disabledEventTypesSchema.parse(['a.*', 'b.c', 'a.*'])).toEqual(['a.*', 'b.c']);
    for (const bad of [['*'], ['.*'], ['a b'], ['a.*.b*'], [1], 'a.*', Array.from({ length: 101 }, (_, i) => `t${i}`)]) {
      expect(disabledEventTypesSchema.safeParse(bad).success).toBe(false);
    }
  });

  test('planBeforeAttempt cancels a switched-off type with event_type_disabled whatever onEndpointInactive says', () => {
    const endpoint = { status: 'active' as const, disabledAt: null, policy: { onEndpointInactive: 'hold' as const, maxPayloadBytes: null } };
    expect(planBeforeAttempt({ endpoint, orgSuspended: false, eventTypeDisabled: true, envelopeBytes: 10 })).toEqual({ kind: 'settle', outcome: 'cancelled', reason: 'event_type_disabled' });
    expect(planBeforeAttempt({ endpoint, orgSuspended: false, eventTypeDisabled: false, envelopeBytes: 10 })).toEqual({ kind: 'send' });
    // A suspended org is named first: its reason is the one an operator must act on.
    expect(planBeforeAttempt({ endpoint, orgSuspended: true, eventTypeDisabled: true, envelopeBytes: 10 })).toMatchObject({ outcome: 'held', reason: 'org_suspended' });
  });
});

describe('whether the check is asked', () => {
  test('none, no URL: never; every: always; first: until the body is frozen', () => {
    const url = 'https://hr.example/check';
    expect(shouldAskCheck({ mode: 'none', checkUrl: url, hasFrozenEnvelope: false })).toBe(false);
    expect(shouldAskCheck({ mode: undefined, checkUrl: url, hasFrozenEnvelope: false })).toBe(false);
    expect(shouldAskCheck({ mode: 'every', checkUrl: null, hasFrozenEnvelope: false })).toBe(false);
    expect(shouldAskCheck({ mode: 'every', checkUrl: url, hasFrozenEnvelope: true })).toBe(true);
    expect(shouldAskCheck({ mode: 'first', checkUrl: url, hasFrozenEnvelope: false })).toBe(true);
    expect(shouldAskCheck({ mode: 'first', checkUrl: url, hasFrozenEnvelope: true })).toBe(false);
  });

  test('policies: none by default, jitter-45h asks before every attempt, anything else is refused', () => {
    expect(PRESETS.standard.policy.preAttemptCheck).toBe('none');
    expect(PRESETS['jitter-45h'].policy.preAttemptCheck).toBe('every');
    const first = resolvePolicy({ preAttemptCheck: 'first' });
    expect(first.ok && first.policy.preAttemptCheck).toBe('first');
    const bad = resolvePolicy({ preAttemptCheck: 'always' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.issues[0]).toEqual({ path: 'policy.preAttemptCheck', message: 'preAttemptCheck must be one of none, first, every' });
  });

  test('the check request names the event, endpoint, delivery and attempt', () => {
    expect(JSON.parse(checkRequestBody({ eventId: 'evt_1', eventType: 't', endpointId: 'ep_1', deliveryId: 'dlv_1', attempt: 2, bodyOpen: false }))).toEqual({
      eventId: 'evt_1',
      eventType: 't',
      endpointId: 'ep_1',
      deliveryId: 'dlv_1',
      attempt: 2,
      bodyOpen: false,
    });
  });
});

describe('reading the check answer', () => {
  test('send, send with data (only while the body is open), cancel with a reason', () => {
    expect(plan(ok('{"action":"send"}'))).toEqual({ kind: 'send' });
    const withData = plan(ok('{"action":"send","data":{"visible":"owner","n":[1,2]}}'));
    expect(withData).toEqual({ kind: 'send', envelope: '{"id":"evt_1","type":"time.logged","timestamp":"2026-01-02T03:04:05.000Z","data":{"visible":"owner","n":[1,2]}}' });
    expect(plan(ok('{"action":"send","data":{"x":1}}'), false)).toEqual({ kind: 'send' });
    expect(plan(ok('{"action":"send","data":null}'))).toMatchObject({ kind: 'send', envelope: expect.stringContaining('"data":null}') });
    expect(plan(ok('{"action":"cancel","reason":"owner_cannot_see_record"}'))).toEqual({ kind: 'cancel', cancelReason: 'check:owner_cannot_see_record' });
  });

  test('anything else is a Postern-side fault with an internal: code, never an exception', () => {
    const faults: [CheckResponse, string][] = [
      [ok('not json'), 'internal:check_bad_answer'],
      [ok(''), 'internal:check_bad_answer'],
      [ok('[]'), 'internal:check_bad_answer'],
      [ok('null'), 'internal:check_bad_answer'],
      [ok('{"action":"maybe"}'), 'internal:check_bad_answer'],
      [ok('{"action":"cancel"}'), 'internal:check_bad_answer'],
      [ok('{"action":"cancel","reason":"Has Spaces"}'), 'internal:check_bad_answer'],
      [ok(`{"action":"cancel","reason":"${'a'.repeat(65)}"}`), 'internal:check_bad_answer'],
      [ok('{"action":"send"}', 302), 'internal:check_status'],
      [ok('{"action":"send"}', 500), 'internal:check_status'],
      [{ kind: 'response', status: 200, body: '{"action":"send"', bodyTruncated: true }, 'internal:check_answer_too_large'],
      [ok(`{"action":"send","data":"${'x'.repeat(MAX_CHECK_ANSWER_BYTES)}"}`), 'internal:check_answer_too_large'],
      [{ kind: 'error', code: 'timeout' }, 'internal:check_timeout'],
      [{ kind: 'error', code: 'connection_failed:ECONNREFUSED' }, 'internal:check_unreachable'],
      [{ kind: 'error', code: 'unsafe_url:private' }, 'internal:check_unsafe_url'],
    ];
    for (const [response, error] of faults) expect(plan(response)).toEqual({ kind: 'fault', error });
  });

  test('envelopeWithData keeps id, type and timestamp byte for byte', () => {
    expect(envelopeWithData(envelope, '7')).toBe('{"id":"evt_1","type":"time.logged","timestamp":"2026-01-02T03:04:05.000Z","data":7}');
    expect(envelopeWithData('not an envelope', '7')).toBeNull();
  });
});

describe('the body of an attempt', () => {
  const frozen = '{"id":"evt_1","data":"frozen"}';
  const built = '{"id":"evt_1","data":"built"}';
  const body = (check: Parameters<typeof planAttemptBody>[0]['check'], frozenEnvelope?: string, maxPayloadBytes: number | null = null) =>
    planAttemptBody({ check, frozenEnvelope, envelope, maxPayloadBytes });

  test('without a check: the frozen body, else the event envelope; nothing to freeze', () => {
    expect(body(null)).toEqual({ kind: 'send', envelope, freeze: false });
    expect(body(null, frozen)).toEqual({ kind: 'send', envelope: frozen, freeze: false });
  });

  test('the first send freezes the built body (or the envelope); later sends keep the frozen one', () => {
    expect(body({ kind: 'send', envelope: built })).toEqual({ kind: 'send', envelope: built, freeze: true });
    expect(body({ kind: 'send' })).toEqual({ kind: 'send', envelope, freeze: true });
    expect(body({ kind: 'send' }, frozen)).toEqual({ kind: 'send', envelope: frozen, freeze: false });
  });

  test('cancel and faults send nothing; a built body over maxPayloadBytes is payload_too_large', () => {
    expect(body({ kind: 'cancel', cancelReason: 'check:x' })).toEqual({ kind: 'cancel', cancelReason: 'check:x' });
    expect(body({ kind: 'fault', error: 'internal:check_timeout' })).toEqual({ kind: 'unsent', error: 'internal:check_timeout' });
    expect(body({ kind: 'send', envelope: built }, undefined, built.length - 1)).toEqual({ kind: 'unsent', error: 'payload_too_large' });
    expect(planAttemptBody({ check: { kind: 'send' }, frozenEnvelope: undefined, envelope: null, maxPayloadBytes: null })).toEqual({ kind: 'unsent', error: 'internal:event_missing' });
  });
});
