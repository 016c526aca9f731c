import { formatSavedRequest, parseSavedRequest } from './saved-request.js';
import { sinceToMs } from './duration.js';
import { configPath } from './config-file.js';

describe('parseSavedRequest', () => {
  it('reads headers and keeps the body byte for byte', () => {
    const r = parseSavedRequest('POST /hook HTTP/1.1\r\nWebhook-Id: evt_1\r\ncontent-type: application/json\r\n\r\n{"a": 1}\n');
    expect(r.headers).toEqual({ 'webhook-id': 'evt_1', 'content-type': 'application/json' });
    expect(r.body).toBe('{"a": 1}\n');
  });
  it('round-trips what formatSavedRequest writes', () => {
    const text = formatSavedRequest('POST', '/', { 'webhook-id': 'evt_2', 'x-many': ['a', 'b'] }, '{}');
    expect(parseSavedRequest(text)).toEqual({ headers: { 'webhook-id': 'evt_2', 'x-many': 'a, b' }, body: '{}' });
  });
  it('says what is wrong', () => {
    expect(() => parseSavedRequest('webhook-id: evt_1')).toThrow(/blank line/);
    expect(() => parseSavedRequest('nonsense\n\n{}')).toThrow(/not a header line/);
  });
});

describe('sinceToMs', () => {
  it('takes durations back from now and ISO times', () => {
    expect(sinceToMs('2h', 10_000_000)).toBe(10_000_000 - 7_200_000);
    expect(sinceToMs('90s', 100_000)).toBe(10_000);
    expect(sinceToMs('2026-11-29T12:00:00Z', 0)).toBe(Date.parse('2026-11-29T12:00:00Z'));
    expect(() => sinceToMs('yesterday', 0)).toThrow(/--since/);
  });
});

describe('configPath', () => {
  it('follows XDG_CONFIG_HOME when absolute, else ~/.config', () => {
    expect(configPath({ XDG_CONFIG_HOME: '/tmp/x' }, '/home/u')).toBe('/tmp/x/postern/config.json');
    expect(configPath({ XDG_CONFIG_HOME: 'rel' }, '/home/u')).toBe('/home/u/.config/postern/config.json');
    expect(configPath({}, '/home/u')).toBe('/home/u/.config/postern/config.json');
  });
});
