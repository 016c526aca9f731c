import { errorLabel, tokenFetchLabel } from './sender-metrics.js';

describe('errorLabel', () => {
  it.each([
    [null, 'none'],
    ['http_503', 'http_503'],
    ['http_404', 'http_404'],
    ['timeout', 'timeout'],
    ['redirect_not_followed', 'redirect_not_followed'],
    ['connection_failed:ECONNREFUSED', 'connection_failed:ECONNREFUSED'],
    ['connection_failed', 'connection_failed'],
    ['tls_error:CERT_HAS_EXPIRED', 'tls_error:CERT_HAS_EXPIRED'],
    ['dns_lookup_failed:ENOTFOUND', 'dns_lookup_failed:ENOTFOUND'],
    ['unsafe_url:loopback', 'unsafe_url:loopback'],
    ['internal:event_missing', 'internal:event_missing'],
    // Details of another shape fall back to the family: the label set stays bounded.
    ['connection_failed:lowercase_detail', 'connection_failed'],
    ['unsafe_url:SHOUTING', 'unsafe_url'],
    ['tls_error:A_VERY_LONG_CODE_THAT_GOES_ON_AND_ON_AND_ON_FOREVER', 'tls_error'],
    // Not in the closed set at all.
    ['something else', 'delivery_failed'],
    ['http_12', 'delivery_failed'],
  ])('%s → %s', (code, label) => {
    expect(errorLabel(code)).toBe(label);
  });
});

describe('tokenFetchLabel', () => {
  it.each([
    ['ok', 'ok'],
    ['token_http_500', 'token_http_500'],
    ['token_http_401', 'token_http_401'],
    ['token_timeout', 'token_timeout'],
    ['token_bad_answer', 'token_bad_answer'],
    ['token_bad_url', 'token_bad_url'],
    // System codes and address classes are dropped: one series per family.
    ['token_connection_failed_ECONNREFUSED', 'token_connection_failed'],
    ['token_tls_error_CERT_HAS_EXPIRED', 'token_tls_error'],
    ['token_dns_lookup_failed_ENOTFOUND', 'token_dns_lookup_failed'],
    ['token_unsafe_url_loopback', 'token_unsafe_url'],
    ['token_http_12', 'token_other'],
    ['token_delivery_failed', 'token_other'],
    ['anything else', 'token_other'],
  ])('%s → %s', (result, label) => {
    expect(tokenFetchLabel(result)).toBe(label);
  });
});
