import type { LookupOptions } from 'node:dns';
import { classifyAddress } from '@postern/shared';
import { guardedLookup, unsafeAddressReason, UNSAFE_ADDRESS_CODE } from './address-guard.js';
import { classifyNetworkError } from './network-errors.js';

const answers: Record<string, string[]> = {
  'dual.example': ['93.184.216.34', '2606:2800:220:1::1'],
  'v6.example': ['2606:2800:220:1::1'],
  'mixed.example': ['93.184.216.34', '::7f00:1', '10.0.0.1'],
};
const lookupAll = async (hostname: string) => {
  const answer = answers[hostname];
  if (answer) return answer;
  throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}`), { code: 'EAI_AGAIN' });
};
const lookup = guardedLookup(lookupAll, (a) => classifyAddress(a, []));

/** Calls the callback-style lookup; resolves with what it called back. */
function call(hostname: string, options: LookupOptions): Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }> {
  return new Promise((resolve) => lookup(hostname, options, (err, address, family) => resolve({ err, address, family })));
}

test('with `all`, every address comes back with its family (what net.connect asks for)', async () => {
  expect(await call('dual.example', { all: true })).toEqual({
    err: null,
    address: [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ],
    family: undefined,
  });
});

test('without `all`, the first address of the asked family; none of that family is ENOTFOUND', async () => {
  expect(await call('dual.example', {})).toEqual({ err: null, address: '93.184.216.34', family: 4 });
  expect(await call('dual.example', { family: 6 })).toEqual({ err: null, address: '2606:2800:220:1::1', family: 6 });
  expect((await call('v6.example', { family: 4 })).err).toMatchObject({ code: 'ENOTFOUND' });
});

test('one refused address refuses the whole answer, with the reason of the first refused one, whatever was asked', async () => {
  for (const options of [{ all: true }, {}, { family: 4 }]) {
    const { err } = await call('mixed.example', options);
    expect(err).toMatchObject({ code: UNSAFE_ADDRESS_CODE, reason: 'ipv4_compatible' });
    // The address stays out of the message (messages reach logs).
    expect(err?.message).not.toContain('7f00');
  }
});

test("the resolver's own error is passed on", async () => {
  expect((await call('nowhere.example', { all: true })).err).toMatchObject({ code: 'EAI_AGAIN' });
});

test('a refusal is recorded as unsafe_url:<reason>, also when got wraps it', async () => {
  const { err } = await call('mixed.example', { all: true });
  // got's RequestError copies `code` and keeps the socket's error as `cause`.
  const wrapped = Object.assign(new Error(err!.message, { cause: err }), { name: 'RequestError', code: err!.code });
  expect(unsafeAddressReason(wrapped)).toBe('ipv4_compatible');
  expect(classifyNetworkError(wrapped, () => null)).toBe('unsafe_url:ipv4_compatible');
  expect(unsafeAddressReason(new Error('other'))).toBeNull();
});
