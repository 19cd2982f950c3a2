// mulberry32: a small seeded PRNG for property tests, so a failing case can be replayed from its seed.
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)]!;
  const subset = <T>(items: readonly T[], min = 0) => {
    const chosen = items.filter(() => next() < 0.4);
    return chosen.length >= min ? chosen : [pick(items)];
  };
  return { next, int, pick, subset, chance: (p: number) => next() < p };
}
