import { errorLabel } from './sender-metrics.js';

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
