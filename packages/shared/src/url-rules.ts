import ipaddr from 'ipaddr.js';

/** Longest endpoint URL accepted, in characters. */
export const MAX_URL_LENGTH = 2048;

/** Why {@link validateEndpointUrl} refused a URL. */
export type UrlRejection = 'invalid_url' | 'too_long' | 'unsupported_scheme' | 'credentials_not_allowed' | 'missing_host' | 'invalid_port' | 'control_characters' | 'host_too_long' | 'label_too_long';

/** Longest host name DNS can carry, in characters (RFC 1035 §2.3.4: 255 octets on the wire). */
export const MAX_HOSTNAME_LENGTH = 253;
/** Longest label (the part between dots) of a host name, in characters (RFC 1035 §2.3.4). */
export const MAX_HOST_LABEL_LENGTH = 63;

/** C0 controls (tab, newline…), DEL and C1 controls: WHATWG `URL` drops some silently and escapes others. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Checks the shape of an endpoint URL: parseable by WHATWG `URL`, `http:` or
 * `https:`, no user name or password (they would be sent to whoever answers,
 * and logged), a host, a port other than 0, at most {@link MAX_URL_LENGTH} characters, no control
 * character anywhere (`URL` would drop a tab or newline silently and store another URL), a host
 * name DNS can carry: at most {@link MAX_HOSTNAME_LENGTH} characters (punycode, a final dot not
 * counted), each label at most {@link MAX_HOST_LABEL_LENGTH}. It does not
 * look at addresses: resolve the host and run {@link classifyAddress} on every
 * address, at registration and again before each attempt (jitter-45h resolves
 * again every time), since DNS can change.
 *
 * @returns `{ok: true, url}` with the parsed (normalised) URL, or
 *   `{ok: false, reason}` with a snake_case {@link UrlRejection}.
 */
export function validateEndpointUrl(raw: string): { ok: true; url: URL } | { ok: false; reason: UrlRejection } {
  if (typeof raw !== 'string') return { ok: false, reason: 'invalid_url' };
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: 'too_long' };
  if (CONTROL_CHARACTER.test(raw)) return { ok: false, reason: 'control_characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'invalid_url' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'unsupported_scheme' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials_not_allowed' };
  if (url.hostname === '') return { ok: false, reason: 'missing_host' };
  if (hostAddress(url) === null) {
    const name = url.hostname.replace(/\.$/, '');
    if (name.length > MAX_HOSTNAME_LENGTH) return { ok: false, reason: 'host_too_long' };
    if (name.split('.').some((label) => label.length > MAX_HOST_LABEL_LENGTH)) return { ok: false, reason: 'label_too_long' };
  }
  // Port 0 cannot be connected to; every other port WHATWG accepts (1..65535) can.
  if (url.port === '0') return { ok: false, reason: 'invalid_port' };
  if (url.href.length > MAX_URL_LENGTH) return { ok: false, reason: 'too_long' };
  return { ok: true, url };
}

/**
 * The IP address a URL's host names directly, or null when the host is a
 * name that needs DNS. WHATWG URL parsing already turns IPv4 written as one
 * number, hex or octal (`2130706433`, `0x7f.0.0.1`, `0177.0.0.1`) into dotted
 * decimal, and this strips the brackets of an IPv6 host.
 */
export function hostAddress(url: URL): string | null {
  const host = url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname;
  return ipaddr.IPv4.isValidFourPartDecimal(host) || ipaddr.IPv6.isValid(host) ? host : null;
}

/** ipaddr.js range names whose snake_case would be unclear, mapped to Postern's reason. */
const RANGE_REASON: Readonly<Record<string, string>> = {
  carrierGradeNat: 'cgnat',
  rfc6052: 'nat64',
  rfc6145: 'ipv4_translated',
};

function reasonOf(range: string): string {
  return RANGE_REASON[range] ?? range.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function parseAddress(text: string): Parsed | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  try {
    return ipaddr.parse(bare);
  } catch {
    return null;
  }
}

function matchesEntry(address: Parsed, entry: string): boolean {
  const candidates: Parsed[] = [address];
  try {
    if (entry.includes('/')) {
      const cidr = ipaddr.parseCIDR(entry);
      return candidates.some((c) => c.kind() === cidr[0].kind() && c.match(cidr));
    }
    const exact = ipaddr.parse(entry);
    return candidates.some((c) => c.kind() === exact.kind() && c.toNormalizedString() === exact.toNormalizedString());
  } catch {
    // A malformed entry matches nothing: failing closed is the safe direction.
    return false;
  }
}

/**
 * Decides whether Postern may connect to an address (docs/architecture.md,
 * "Outbound address safety": only what ipaddr.js calls `unicast` is public,
 * and not `::a.b.c.d`). The sender applies it twice with the same allow-list:
 * before an attempt, and at connect time to every address a socket may dial
 * (apps/sender address-guard.ts), so both refuse the same addresses.
 *
 * @param ip - an IPv4 or IPv6 address as text (brackets allowed), e.g. a DNS
 *   answer or {@link hostAddress} of an endpoint URL.
 * @param allowList - exact addresses or CIDRs that are allowed even when not
 *   public (tests allow `127.0.0.1`). An IPv4-mapped IPv6 address never matches
 *   the IPv4 address inside it: the connect-time guard refuses those. See {@link parseAllowList}.
 * @returns null when allowed; otherwise a snake_case reason for
 *   `unsafe_url:<reason>`: `loopback`, `private`, `link_local`, `cgnat`,
 *   `unspecified`, `broadcast`, `multicast`, `reserved`, `ipv4_mapped`,
 *   `nat64`, `6to4`, `teredo`, `unique_local`, … (ipaddr.js range names in
 *   snake_case), `ipv4_compatible` for `::a.b.c.d`, or `invalid_address`
 *   when `ip` is not an IP address.
 *   Every IPv4-mapped IPv6 address is refused as `ipv4_mapped`, whatever it
 *   embeds, because that is what the connect-time check does.
 */
export function classifyAddress(ip: string, allowList: readonly string[]): string | null {
  const address = parseAddress(ip);
  if (address === null) return 'invalid_address';
  if (allowList.some((entry) => matchesEntry(address, entry))) return null;
  const range = address.range();
  if (range !== 'unicast') return reasonOf(range);
  // ::/96 (deprecated IPv4-compatible) is "unicast" to ipaddr.js but only ever embeds an IPv4 address.
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) {
    return 'ipv4_compatible';
  }
  return null;
}

/**
 * Parses a comma-separated allow list from configuration, e.g.
 * `127.0.0.1, ::1, 10.0.0.0/8`. Entries are trimmed, empty ones dropped, and
 * each returned in canonical form (`::1`, `10.0.0.0/8`) so the list can also
 * be handed to request-filtering-agent's `allowIPAddressList`, which compares
 * exact addresses as text. IPv4 must be dotted decimal.
 *
 * @throws Error naming the first entry that is neither an IP address nor a CIDR.
 */
export function parseAllowList(csv: string): string[] {
  const out: string[] = [];
  for (const raw of csv.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const slash = entry.indexOf('/');
    const host = slash < 0 ? entry : entry.slice(0, slash);
    const bits = slash < 0 ? '' : entry.slice(slash + 1);
    const isV4 = ipaddr.IPv4.isValidFourPartDecimal(host);
    const isV6 = !isV4 && ipaddr.IPv6.isValid(host) && !host.includes('%');
    const maxBits = isV4 ? 32 : 128;
    if ((!isV4 && !isV6) || (slash >= 0 && (!/^\d{1,3}$/.test(bits) || Number(bits) > maxBits))) {
      throw new Error(`allow list entry "${entry}" is not an IP address or CIDR`);
    }
    const canonical = isV4 ? ipaddr.IPv4.parse(host).toString() : ipaddr.IPv6.parse(host).toString();
    out.push(slash < 0 ? canonical : `${canonical}/${Number(bits)}`);
  }
  return out;
}
