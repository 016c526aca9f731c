/**
 * Seeded randomness for the soak, so a failing run replays with its `SOAK_SEED`: the topology, the
 * producer's choices, every receiver's answers and the fault schedule all come from it.
 */

/** A function returning uniform floats in [0, 1), like `Math.random`. */
export type Random = () => number;

/** mulberry32: a small, fast 32-bit PRNG; the same `seed` (an integer) gives the same stream. */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A uniform float in [0, 1) fixed by `parts` (e.g. seed, endpoint, event number, attempt): the
 * receivers decide each answer with it, so an answer does not depend on the order requests arrive in.
 */
export function hashUnit(...parts: (number | string)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const s = `${part}|`;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
  }
  return mulberry32(h >>> 0)();
}

/** An integer in [min, max] from `random`. */
export function intBetween(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** One of `items`, picked by `random`; `weights` (same length) default to equal. */
export function pick<T>(random: Random, items: readonly T[], weights?: readonly number[]): T {
  if (items.length === 0) throw new Error('pick: no items');
  const w = weights ?? items.map(() => 1);
  const total = w.reduce((a, b) => a + b, 0);
  let x = random() * total;
  for (let i = 0; i < items.length; i++) {
    x -= w[i] ?? 0;
    if (x < 0) return items[i] as T;
  }
  return items[items.length - 1] as T;
}
