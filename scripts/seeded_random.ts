/**
 * A seeded random source (mulberry32): numbers in [0, 1), the same sequence
 * for the same seed, so benches and property tests see fixed workloads.
 *
 * @example
 * ```ts
 * import { seededRandom } from "./seeded_random.ts";
 * const next = seededRandom(7);
 * next() === seededRandom(7)(); // true
 * ```
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
