import { joinSplitValues } from './split-values.js';

test('pieces are joined in index order as bytes, so a UTF-8 character cut between two pieces survives', () => {
  const whole = Buffer.from('{"name":"Zoë — 東京"}', 'utf8');
  const cut = 11; // inside "ë"
  const h = { 'envelope~1': whole.subarray(cut), 'envelope~0': whole.subarray(0, cut), type: Buffer.from('invoice.paid') };
  expect(joinSplitValues(h)).toEqual({ envelope: '{"name":"Zoë — 東京"}', type: 'invoice.paid' });
});

test('ten pieces or more sort by number, not text; a value stored whole wins over stray pieces', () => {
  const h: Record<string, Buffer> = {};
  for (let i = 0; i < 12; i++) h[`1~${i}`] = Buffer.from(String.fromCharCode(97 + i));
  h.deliveryIds = Buffer.from('["dlv_1"]');
  h['deliveryIds~0'] = Buffer.from('stale');
  expect(joinSplitValues(h)).toEqual({ 1: 'abcdefghijkl', deliveryIds: '["dlv_1"]' });
});
