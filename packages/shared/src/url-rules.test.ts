import { classifyAddress, hostAddress, parseAllowList, validateEndpointUrl } from './url-rules.js';

describe('validateEndpointUrl', () => {
  it.each(['https://example.com/hooks', 'http://example.com:8080/a?b=c', 'https://[2606:4700::1111]/x', 'http://127.0.0.1:3000/', `https://${'a'.repeat(63)}.example.com./`, `https://${Array.from({ length: 3 }, () => 'a'.repeat(63)).join('.')}.${'b'.repeat(61)}/`])(
    'accepts %s',
    (raw) => {
      const result = validateEndpointUrl(raw);
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.url).toBeInstanceOf(URL);
    },
  );

  it.each([
    ['ftp://example.com/', 'unsupported_scheme'],
    ['file:///etc/passwd', 'unsupported_scheme'],
    ['javascript:alert(1)', 'unsupported_scheme'],
    ['https://user:pw@example.com/', 'credentials_not_allowed'],
    ['https://user@example.com/', 'credentials_not_allowed'],
    ['https://:pw@example.com/', 'credentials_not_allowed'],
    ['not a url', 'invalid_url'],
    ['example.com/hooks', 'invalid_url'],
    ['https://', 'invalid_url'],
    ['http://exa mple.com/', 'invalid_url'],
    ['', 'invalid_url'],
    [`https://example.com/${'a'.repeat(2048)}`, 'too_long'],
    ['https://example.com/a\tb', 'control_characters'],
    ['https://example.com/\nhook', 'control_characters'],
    ['https://exa\u0001mple.com/', 'control_characters'],
    ['https://example.com/\u0085', 'control_characters'],
    [`https://${'a'.repeat(64)}.example.com/`, 'label_too_long'],
    [`https://${Array.from({ length: 4 }, () => 'a'.repeat(63)).join('.')}.com/`, 'host_too_long'],
    [`https://${'é'.repeat(60)}.example/`, 'label_too_long'],
  ])('refuses %s as %s', (raw, reason) => {
    expect(validateEndpointUrl(raw)).toEqual({ ok: false, reason });
  });
});

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link_local'],
    ['100.64.0.1', 'cgnat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'ipv4_mapped'],
    ['::ffff:10.0.0.1', 'ipv4_mapped'],
    ['::ffff:93.184.216.34', 'ipv4_mapped'],
    ['64:ff9b::a00:1', 'nat64'],
    ['2002:7f00:1::', '6to4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['::7f00:1', 'ipv4_compatible'],
    ['::808:808', 'ipv4_compatible'],
  ])('refuses %s as %s', (ip, reason) => {
    expect(classifyAddress(ip, [])).toBe(reason);
  });

  it.each(['93.184.216.34', '2606:4700::1111', '8.8.8.8', '172.32.0.1', '[2606:4700::1111]'])('allows public %s', (ip) => {
    expect(classifyAddress(ip, [])).toBeNull();
  });

  it('refuses text that is not an address', () => {
    expect(classifyAddress('example.com', [])).toBe('invalid_address');
    expect(classifyAddress('', [])).toBe('invalid_address');
  });

  it('lets the allow list through, by exact address or CIDR', () => {
    expect(classifyAddress('127.0.0.1', ['127.0.0.1'])).toBeNull();
    expect(classifyAddress('127.0.0.2', ['127.0.0.1'])).toBe('loopback');
    expect(classifyAddress('127.9.9.9', ['127.0.0.0/8'])).toBeNull();
    expect(classifyAddress('128.0.0.1', ['127.0.0.0/8'])).toBeNull(); // public anyway
    expect(classifyAddress('10.0.0.1', ['127.0.0.0/8'])).toBe('private');
    expect(classifyAddress('::1', ['0:0:0:0:0:0:0:1'])).toBeNull();
    expect(classifyAddress('fd00::5', ['fd00::/8'])).toBeNull();
    // The connect-time guard refuses every IPv4-mapped address whatever the list says, so the
    // rule here must too, or the API would accept a URL the sender can never reach.
    expect(classifyAddress('::ffff:127.0.0.1', ['127.0.0.1'])).toBe('ipv4_mapped');
    expect(classifyAddress('::ffff:127.0.0.1', ['127.0.0.0/8'])).toBe('ipv4_mapped');
    // Mixed families and junk entries match nothing.
    expect(classifyAddress('127.0.0.1', ['::1', 'fd00::/8', 'garbage', '1.2.3.4/99'])).toBe('loopback');
  });

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.0.0.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://[::ffff:7f00:1]/', '::ffff:7f00:1'],
  ])('sees through the odd spelling of %s', (raw, address) => {
    const url = new URL(raw);
    expect(url.hostname.replace(/^\[|\]$/g, '')).toBe(address);
    expect(hostAddress(url)).toBe(address);
    expect(classifyAddress(url.hostname, [])).not.toBeNull();
    expect(classifyAddress(hostAddress(url) as string, [])).not.toBeNull();
  });

  it('reports no address for a host name', () => {
    expect(hostAddress(new URL('https://example.com/'))).toBeNull();
    expect(hostAddress(new URL('https://[2606:4700::1111]/'))).toBe('2606:4700::1111');
  });
});

describe('parseAllowList', () => {
  it('trims, drops empties and canonicalises', () => {
    expect(parseAllowList(' 127.0.0.1, ::1 ,, 10.0.0.0/8, 0:0:0:0:0:0:0:1, fd00::/8 ')).toEqual([
      '127.0.0.1',
      '::1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
    ]);
    expect(parseAllowList('')).toEqual([]);
  });

  it.each(['localhost', '127.0.0.1/33', '::1/129', '10.0.0.0/x', '0x7f.0.0.1', '127.1', '1.2.3.4/', '1.2.3.4/8/8'])(
    'throws on %s',
    (entry) => {
      expect(() => parseAllowList(`127.0.0.1,${entry}`)).toThrow(entry);
    },
  );
});
