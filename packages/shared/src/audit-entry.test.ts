import { AUDIT_ACTIONS, buildAuditEntry, changedFields, isAuditAction } from './audit-entry.js';

const actor = { kind: 'api_key', id: 'key_1', name: 'ci' } as const;

describe('changedFields', () => {
  test('names the fields whose values differ, sorted, never their values', () => {
    const out = changedFields({ url: 'https://a', description: 'x', secret: 'whsec_old' }, { url: 'https://b', description: 'x', secret: 'whsec_new' });
    expect(out).toEqual(['secret', 'url']);
    expect(JSON.stringify(out)).not.toContain('whsec');
  });

  test('ignores bookkeeping fields and compares objects by value, key order aside', () => {
    expect(changedFields({ a: { x: 1, y: [1, 2] }, updatedAt: 1 }, { a: { y: [1, 2], x: 1 }, updatedAt: 2 }, { ignore: ['updatedAt'] })).toEqual([]);
  });

  test('expands the named object fields one level', () => {
    expect(changedFields({ policy: { maxAttempts: 3, timeout: { ms: 1 } } }, { policy: { maxAttempts: 4, timeout: { ms: 2 } } }, { expand: ['policy'] })).toEqual(['policy.maxAttempts', 'policy.timeout']);
  });

  test('a field on one side only is a change; null is a value', () => {
    expect(changedFields({ auth: null }, { auth: { type: 'bearer' } })).toEqual(['auth']);
    expect(changedFields({ proxy: null }, {})).toEqual(['proxy']);
  });

  test('a creation or deletion names every field that side has', () => {
    expect(changedFields(null, { url: 'u', description: '' })).toEqual(['description', 'url']);
    expect(changedFields({ url: 'u' }, null)).toEqual(['url']);
  });
});

describe('buildAuditEntry', () => {
  test('merges given and computed change names, deduplicated and sorted', () => {
    const entry = buildAuditEntry({ id: 'aud_1', atMs: 5, actor, action: 'endpoint.updated', target: { type: 'endpoint', id: 'ep_1' }, requestId: 'req_1', changes: ['url'], before: { url: 'a', status: 'active' }, after: { url: 'b', status: 'paused' } });
    expect(entry).toEqual({ id: 'aud_1', at: 5, actor, action: 'endpoint.updated', target: { type: 'endpoint', id: 'ep_1' }, changes: ['status', 'url'], requestId: 'req_1' });
  });

  test('an action without shapes has only the names given', () => {
    expect(buildAuditEntry({ id: 'aud_2', atMs: 1, actor, action: 'delivery.redelivered', target: { type: 'delivery', id: 'dlv_1' }, requestId: 'r' }).changes).toEqual([]);
  });
});

test('actions are dotted snake_case and recognised', () => {
  for (const a of AUDIT_ACTIONS) expect(a).toMatch(/^[a-z_]+\.[a-z_]+$/);
  expect(isAuditAction('endpoint.created')).toBe(true);
  expect(isAuditAction('endpoint.exploded')).toBe(false);
});
