import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Resolves a host name to every address it has (injectable so tests can fake DNS answers). */
export type LookupAll = (hostname: string) => Promise<string[]>;

/**
 * The system resolver (`getaddrinfo`: /etc/hosts, search domains), freshly on every call.
 * `main.ts` gives the sender the TTL-honouring `createDnsCache` (dns-cache.ts) instead, which
 * falls back to this.
 */
export const systemLookupAll: LookupAll = async (hostname) => (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Checks where an attempt would go before any byte is sent: a DNS lookup (the sender passes its
 * DNS cache's `lookupAll`, whose answers last their TTL), then the address rules on every answer.
 * The transport's agents check again at connect time with the same `classifyAddress` on the same
 * answer (address-guard.ts), so a DNS answer that changes in between is still caught, with the
 * same reason. Every preset refuses unsafe destinations; whether that is permanent is the
 * policy's `unsafeUrl`.
 *
 * @param url the endpoint URL (parsed by `validateEndpointUrl`)
 * @param classifyAddress `classifyAddress` of `@postern/shared` with the allow-list applied
 * @param lookupAll every address of a host name; default {@link systemLookupAll}
 *
 * @returns null when every address is allowed, else an error code: `unsafe_url:<reason>` or
 *   `dns_lookup_failed:<ECODE>`
 */
export async function checkDestination(
  url: URL,
  classifyAddress: (address: string) => string | null,
  lookupAll: LookupAll = systemLookupAll,
): Promise<string | null> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    const reason = classifyAddress(host);
    return reason ? `unsafe_url:${reason}` : null;
  }
  let addresses: string[];
  try {
    addresses = await lookupAll(host);
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'ENOTFOUND';
    return `dns_lookup_failed:${/^[A-Z0-9_]+$/.test(code) ? code : 'ENOTFOUND'}`;
  }
  if (addresses.length === 0) return 'dns_lookup_failed:ENODATA';
  for (const address of addresses) {
    const reason = classifyAddress(address);
    if (reason) return `unsafe_url:${reason}`;
  }
  return null;
}
