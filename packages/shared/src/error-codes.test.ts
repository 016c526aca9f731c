import {
  ERROR_CODES,
  countsAgainstEndpoint,
  errorFamily,
  httpStatusCode,
  isRetried,
  isValidErrorCode,
} from './error-codes.js';
import { PRESETS } from './presets.js';

const P = Object.fromEntries(Object.entries(PRESETS).map(([name, info]) => [name, info.policy])) as {
  [K in keyof typeof PRESETS]: (typeof PRESETS)[K]['policy'];
};
const live = { isTestEvent: false };
const test = { isTestEvent: true };

describe('ERROR_CODES', () => {
  // docs/architecture.md, "Error codes", as documented there.
  const documented = [
    'http_<status>',
    'redirect_not_followed',
    'too_many_redirects',
    'timeout',
    'connection_failed[:<ECODE>]',
    'tls_error[:<CODE>]',
    'dns_lookup_failed[:<ECODE>]',
    'unsafe_url:<reason>',
    'auth_failed:<reason>',
    'proxy_error:<code>',
    'transformation_failed:<reason>',
    'payload_too_large',
    'endpoint_inactive',
    'endpoint_deleted',
    'org_suspended',
    'internal:<reason>',
    'delivery_failed',
  ];

  it('has exactly the families docs/architecture.md lists, each documented', () => {
    expect(ERROR_CODES.map((e) => e.code)).toEqual(documented);
    expect(new Set(ERROR_CODES.map((e) => e.family)).size).toBe(documented.length);
    for (const entry of ERROR_CODES) {
      expect(entry.meaning.length).toBeGreaterThan(10);
      expect(['yes', 'no', 'policy', 'reason']).toContain(entry.retried);
      expect(['yes', 'no', 'policy']).toContain(entry.countsAgainstEndpoint);
    }
  });

  it('says internal faults are retried and never held against the endpoint', () => {
    const internal = ERROR_CODES.find((e) => e.family === 'internal');
    expect(internal).toMatchObject({ retried: 'yes', countsAgainstEndpoint: 'no' });
  });

  it('agrees with isRetried and countsAgainstEndpoint wherever it says yes or no', () => {
    const example: Record<string, string> = {
      http: 'http_500',
      unsafe_url: 'unsafe_url:private',
      auth_failed: 'auth_failed:token_http_500',
      proxy_error: 'proxy_error:ECONNREFUSED',
      internal: 'internal:secret_unreadable',
      transformation_failed: 'transformation_failed:error',
    };
    for (const entry of ERROR_CODES) {
      const code = example[entry.family] ?? entry.family;
      for (const policy of Object.values(P)) {
        if (entry.retried !== 'policy' && entry.retried !== 'reason') expect(isRetried(code, policy, live)).toBe(entry.retried === 'yes');
        if (entry.countsAgainstEndpoint !== 'policy') {
          expect(countsAgainstEndpoint(code, policy)).toBe(entry.countsAgainstEndpoint === 'yes');
        }
      }
    }
  });
});

describe('isValidErrorCode and errorFamily', () => {
  it.each([
    ['http_500', 'http'],
    ['http_404', 'http'],
    ['http_301', 'http'],
    ['redirect_not_followed', 'redirect_not_followed'],
    ['too_many_redirects', 'too_many_redirects'],
    ['timeout', 'timeout'],
    ['connection_failed', 'connection_failed'],
    ['connection_failed:ECONNREFUSED', 'connection_failed'],
    ['tls_error:CERT_HAS_EXPIRED', 'tls_error'],
    ['tls_error', 'tls_error'],
    ['dns_lookup_failed:ENOTFOUND', 'dns_lookup_failed'],
    ['unsafe_url:private', 'unsafe_url'],
    ['payload_too_large', 'payload_too_large'],
    ['endpoint_inactive', 'endpoint_inactive'],
    ['endpoint_deleted', 'endpoint_deleted'],
    ['org_suspended', 'org_suspended'],
    ['internal:redis_unavailable', 'internal'],
    ['delivery_failed', 'delivery_failed'],
    ['transformation_failed:timeout', 'transformation_failed'],
    ['transformation_failed:bad_result', 'transformation_failed'],
  ])('%s is valid, family %s', (code, family) => {
    expect(isValidErrorCode(code)).toBe(true);
    expect(errorFamily(code)).toBe(family);
  });

  it.each([
    'http_5',
    'http_abc',
    'http_099',
    'unsafe_url',
    'unsafe_url:',
    'internal',
    'connection_failed:connect ECONNREFUSED 10.0.0.1:443',
    'timeout:slow',
    'webhook_inactive_or_missing',
    'TIMEOUT',
    '',
  ])('%j is not a valid code and falls into delivery_failed', (code) => {
    expect(isValidErrorCode(code)).toBe(false);
    expect(errorFamily(code)).toBe('delivery_failed');
  });

  it('builds http codes; detailed codes are valid', () => {
    expect(httpStatusCode(503)).toBe('http_503');
    expect(() => httpStatusCode(42)).toThrow(RangeError);
    expect(() => httpStatusCode(200.5)).toThrow(RangeError);
    for (const code of ['connection_failed:ECONNRESET', 'unsafe_url:unknown', 'internal:unknown']) {
      expect(isValidErrorCode(code)).toBe(true);
    }
  });
});

describe('isRetried', () => {
  it('retries ordinary failures under every preset', () => {
    for (const policy of Object.values(P)) {
      for (const code of ['http_500', 'http_404', 'http_301', 'redirect_not_followed', 'timeout', 'connection_failed:ECONNREFUSED', 'tls_error', 'dns_lookup_failed:ENOTFOUND', 'delivery_failed', 'internal:x', 'something_new']) {
        expect(isRetried(code, policy, live)).toBe(true);
      }
    }
  });

  it('never retries the permanent codes', () => {
    for (const policy of Object.values(P)) {
      for (const code of ['payload_too_large', 'endpoint_inactive', 'endpoint_deleted', 'org_suspended']) {
        expect(isRetried(code, policy, live)).toBe(false);
      }
    }
  });

  it('retries unsafe URLs only where the seed does (000 fails them at once)', () => {
    expect(isRetried('unsafe_url:private', P.standard, live)).toBe(false);
    expect(isRetried('unsafe_url:private', P.custral, live)).toBe(false);
    for (const name of ['jitter-45h', 'tourical', 'kestrel', 'vestiarion'] as const) {
      expect(isRetried('unsafe_url:loopback', P[name], live)).toBe(true);
    }
  });

  it('never retries a test event under vestiarion, and does elsewhere', () => {
    expect(isRetried('http_500', P.vestiarion, test)).toBe(false);
    expect(isRetried('internal:x', P.vestiarion, test)).toBe(false);
    expect(isRetried('http_500', P.standard, test)).toBe(true);
    expect(isRetried('http_500', P.vestiarion, live)).toBe(true);
  });
});

describe('countsAgainstEndpoint', () => {
  it('never counts Postern faults or the permanent codes', () => {
    for (const policy of Object.values(P)) {
      for (const code of ['internal:redis_down', 'payload_too_large', 'endpoint_inactive', 'endpoint_deleted', 'org_suspended']) {
        expect(countsAgainstEndpoint(code, policy)).toBe(false);
      }
    }
  });

  it('counts only 4xx under tourical', () => {
    expect(countsAgainstEndpoint('http_404', P.tourical)).toBe(true);
    expect(countsAgainstEndpoint('http_499', P.tourical)).toBe(true);
    expect(countsAgainstEndpoint('http_500', P.tourical)).toBe(false);
    expect(countsAgainstEndpoint('timeout', P.tourical)).toBe(false);
    expect(countsAgainstEndpoint('unsafe_url:private', P.tourical)).toBe(false);
  });

  it('counts every endpoint-side failure elsewhere', () => {
    for (const name of ['standard', 'custral', 'jitter-45h', 'kestrel', 'vestiarion'] as const) {
      for (const code of ['http_500', 'http_404', 'timeout', 'redirect_not_followed', 'connection_failed', 'delivery_failed']) {
        expect(countsAgainstEndpoint(code, P[name])).toBe(true);
      }
    }
  });

  it('counts unsafe URLs only under vestiarion', () => {
    expect(countsAgainstEndpoint('unsafe_url:private', P.vestiarion)).toBe(true);
    for (const name of ['standard', 'custral', 'jitter-45h', 'kestrel'] as const) {
      expect(countsAgainstEndpoint('unsafe_url:private', P[name])).toBe(false);
    }
  });

  it('counts test events only where the breaker says so (vestiarion)', () => {
    expect(countsAgainstEndpoint('http_500', P.vestiarion, test)).toBe(true);
    expect(countsAgainstEndpoint('http_500', P.standard, test)).toBe(false);
    expect(countsAgainstEndpoint('http_500', P.custral, test)).toBe(false);
    expect(countsAgainstEndpoint('http_500', P.standard, live)).toBe(true);
  });
});
