// What sealing costs a delivery (README, "Secrets at rest"): the CPU the sender spends opening an
// endpoint's secrets (and the org's check secret) per claim, sealed and cached, sealed and not
// cached (the first read after a change), and plain, measured with process.cpuUsage over many
// rounds. `node --conditions=development --import tsx bench/secrets-cost.ts`
import { randomBytes } from 'node:crypto';
import { createSecretBox, generateSecret, secretContext } from '@postern/shared';
import { openSealedField } from '@postern/store';

const ROUNDS = 200_000;
const ENDPOINTS = 1000;
const box = createSecretBox({ current: { id: 'k1', key: randomBytes(32) }, previous: [] });
const plainBox = createSecretBox({ current: null, previous: [] });
const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => {
  const plain = JSON.stringify([{ secret: generateSecret(), expiresAt: null }, { secret: generateSecret(), expiresAt: Date.now() + 60_000 }]);
  // As Redis replies arrive: bytes, decoded into a new string on every read.
  return { orgId: `org_${i % 50}`, id: `ep_${i}`, plain: Buffer.from(plain), sealed: Buffer.from(box.sealSecret(plain, secretContext(`org_${i % 50}`, `ep_${i}`, 'secrets'))) };
});

/** CPU µs per round of `fn`, user + system. */
function cpuPerRound(rounds: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(rounds, 10_000); i++) fn(i); // warm up
  const start = process.cpuUsage();
  for (let i = 0; i < rounds; i++) fn(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / rounds;
}

let sink = 0;
const read = (b: typeof box, stored: (e: (typeof endpoints)[number]) => Buffer) => (i: number) => {
  const e = endpoints[i % ENDPOINTS]!;
  // What parseEndpoint does with the field: open it, then parse the JSON list.
  sink += (JSON.parse(openSealedField(b, stored(e).toString('utf8'), e.orgId, e.id, 'secrets')!) as unknown[]).length;
};
const plainUs = cpuPerRound(ROUNDS, read(plainBox, (e) => e.plain));
const cachedUs = cpuPerRound(ROUNDS, read(box, (e) => e.sealed));
// Every read a cache miss (the first read after the stored value changed): two values alternating
// under one context, so each open replaces the other's cache entry and decrypts.
const keyed = createSecretBox({ current: { id: 'k1', key: randomBytes(32) }, previous: [] }, { maxCachedEntries: 1 });
const ctx = secretContext('org_0', 'ep_0', 'secrets');
const pair = [keyed.sealSecret(endpoints[0]!.plain.toString(), ctx), keyed.sealSecret(endpoints[1]!.plain.toString(), ctx)];
const uncachedUs = cpuPerRound(ROUNDS / 4, (i) => {
  sink += keyed.openSecret(pair[i % 2]!, ctx).length;
});
console.log(
  JSON.stringify({
    rounds: ROUNDS,
    endpoints: ENDPOINTS,
    plainUsPerDelivery: +plainUs.toFixed(3),
    sealedCachedUsPerDelivery: +cachedUs.toFixed(3),
    sealingAddsUsPerDelivery: +(cachedUs - plainUs).toFixed(3),
    sealedUncachedUsPerOpen: +uncachedUs.toFixed(3),
    sink: sink > 0,
  }),
);
