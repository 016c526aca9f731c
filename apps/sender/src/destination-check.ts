import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Resolves a host name to every address it has (injectable so tests can fake DNS answers). */
export type LookupAll = (hostname: string) => Promise<string[]>;

/** The system resolver, freshly on every call (no cache): rules apply to today's answer. */
export const systemLookupAll: LookupAll = async (hostname) => (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Checks where an attempt would go before any byte is sent: a fresh DNS lookup, then the address
 * rules on every answer. The request-filtering agent checks again at connect time, so a DNS answer
 * that changes in between is still caught. every preset: unsafe destinations are refused;
 * whether that is permanent is the policy's `unsafeUrl`.
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
